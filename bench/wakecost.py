"""The host's price of a wake-up: an asyncio loop's CPU per blocking wake-up, after idling 0.05 to 10 ms.

    .venv/bin/python bench/wakecost.py                  # 1,000 wake-ups per gap
    .venv/bin/python bench/wakecost.py --gaps 0,1,10 --wakeups 3000

A forked sender writes one byte to a socket pair, then sleeps `gap` ms; the loop (asyncio's own, as the
benches run `kopf run --no-uvloop`) receives it and does a fixed piece of Python work (decode and encode a
small Kubernetes object: ~60 µs on the machines of bench/results/NOTES.md). Printed per gap: the loop's
process CPU (user and system, `getrusage`) per wake-up and per wake-up-and-work, against the same work done
back to back. A replica that handles few events per second pays this price per event, per answer and per
executor hand-off (`bench/sharding.py --count`: `select wait` per object); a replica under load, which finds
several of them per wake-up, does not. Nothing is asserted.
"""
import argparse
import asyncio
import json
import os
import resource
import socket
import time

BODY = json.dumps({
    'apiVersion': 'kopf.dev/v1', 'kind': 'KopfBench',
    'metadata': {'name': 'b-00001', 'namespace': 'ns', 'uid': '0' * 36, 'resourceVersion': '12345',
                 'annotations': {'kopf.zalando.org/last-handled-configuration': 'x' * 200},
                 'managedFields': [{'manager': 'kopf', 'fieldsV1': {'f:status': {f'f:{i}': {} for i in range(20)}}}]},
    'spec': {'n': 0}, 'status': {f'h{i}': {'t': 1.5, 'by': 'ours'} for i in range(10)}})


def work() -> None:
    json.dumps(json.loads(BODY), sort_keys=True)


def sender(gap: float, n: int) -> tuple[int, socket.socket]:
    """A forked process that sends a byte every `gap` seconds, then b'E' (its CPU is not ours); its pid, our end."""
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        for _ in range(n):
            theirs.send(b'x')
            time.sleep(gap)
        theirs.send(b'E')
        os._exit(0)
    theirs.close()
    return pid, ours


async def wakeups(gap: float, n: int, with_work: bool) -> tuple[float, float]:
    """(user, system) CPU seconds of this process per wake-up."""
    loop = asyncio.get_running_loop()
    pid, ours = sender(gap, n)
    ours.setblocking(False)
    before = resource.getrusage(resource.RUSAGE_SELF)
    done = False
    while not done:
        for byte in await loop.sock_recv(ours, 4096):
            if byte == ord('E'):
                done = True
            elif with_work:
                work()
    after = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.to_thread(os.waitpid, pid, 0)
    ours.close()
    return (after.ru_utime - before.ru_utime) / n, (after.ru_stime - before.ru_stime) / n


def back_to_back(n: int) -> float:
    started = time.process_time()
    for _ in range(n):
        work()
    return (time.process_time() - started) / n


async def main(gaps: list[float], n: int) -> None:
    print(f'{"idle gap, ms":>12} {"wake-up: user + sys, µs":>24} {"wake-up + work, µs":>19} {"work alone, µs":>15}')
    for gap in gaps:
        user, system = await wakeups(gap / 1000, n, with_work=False)
        wuser, wsystem = await wakeups(gap / 1000, n, with_work=True)
        alone = back_to_back(n)
        print(f'{gap:>12g} {user * 1e6:>11.0f} + {system * 1e6:<10.0f} {(wuser + wsystem) * 1e6:>19.0f} '
              f'{alone * 1e6:>15.0f}')


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--gaps', default='0,0.05,0.2,1,5,10', help='ms between two messages, comma-separated')
    parser.add_argument('--wakeups', type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main([float(g) for g in args.gaps.split(',')], args.wakeups))
