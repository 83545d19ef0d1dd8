"""Sub-handlers: one per item of `spec.items`, declared inside the create handler with `@kopf.subhandler`.

Their ids are `create_fn/<item>`; each is tracked on its own (progress annotations
`kopf.zalando.org/create_fn.item1`, ...; a failing one is retried alone), and `create_fn` is done
when all of them are. Their results go to `status['create_fn/<item>']`.
"""
import kopf


@kopf.on.create('kopfexamples')
def create_fn(spec, **_):
    for item in spec.get('items', []):

        @kopf.subhandler(id=item)
        def handle_item(item=item, logger=None, **_):
            logger.info(f'=== Handling the item {item!r} ===')
            return {'handled': item}
