"""Several handlers of each kind: create, resume, update, delete, and a field handler.

- Handlers of one cause run in the order they are declared, one per processing cycle: their
  progress is saved in annotations between the cycles, their results go to `status.<handler id>`.
- A delete handler makes the operator put its finalizer on the objects, so that the object stays
  until the delete handlers have finished.
- Resume handlers run for the objects that exist when the operator starts.
- The field handler runs whenever `spec.field` changes, also on creation (from None).
"""
import kopf


@kopf.on.resume('kopfexamples')
def resume_fn(spec, **_):
    print(f'resume_fn: the operator has restarted; spec: {spec}')
    return {'resumed': True}


@kopf.on.create('kopfexamples')
def create_fn_1(spec, **_):
    print(f'create_fn_1: {spec}')
    return {'order': 1}


@kopf.on.create('kopfexamples')
async def create_fn_2(name, **_):
    print(f'create_fn_2: {name}')
    return {'order': 2}


@kopf.on.update('kopfexamples')
def update_fn(diff, **_):
    for _op, field, old, new in diff:
        print(f"update_fn: {'.'.join(field)}: {old!r} -> {new!r}")


@kopf.on.delete('kopfexamples')
def delete_fn_1(name, **_):
    print(f'delete_fn_1: {name}')


@kopf.on.delete('kopfexamples')
async def delete_fn_2(name, **_):
    print(f'delete_fn_2: {name}')


@kopf.on.field('kopfexamples', field='spec.field')
def field_fn(old, new, **_):
    print(f'field_fn: {old!r} -> {new!r}')
