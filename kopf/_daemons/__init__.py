"""Daemons and timers (`@kopf.daemon`, `@kopf.timer`): the background work of each object.

They hang off the object's record (`kopf._core.records`); the engine starts, updates and stops them
after each cycle through the record's background handle, and when the object or the operator goes.

Modules:
- `reasons`    `kopf.DaemonStopped`, `kopf.DaemonStoppingReason`: the `stopped` kwarg and why it is set (pure)
- `decisions`  which daemons and timers run for an object, when a timer is due, the exit log lines (pure)
- `stoppers`   the waiting variants of `DaemonStopped` given to sync and async daemons and timers
- `spawning`   the daemons and timers of each object: started and stopped after its cycles, the operator's exit
- `workers`    one daemon or timer of one object: its attempts, its stop sequence, its due times
"""
