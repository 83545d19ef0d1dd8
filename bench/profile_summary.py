"""Summarise py-spy's raw (collapsed) stacks: the top functions by own and by inclusive samples.

    .venv/bin/python bench/profile_summary.py /tmp/prof/life-ours-0.txt [--top 30] [--filter kopf]
"""
import argparse
import collections
import pathlib


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('path', type=pathlib.Path)
    parser.add_argument('--top', type=int, default=30)
    parser.add_argument('--filter', default='', help='only frames whose text contains this')
    args = parser.parse_args()
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    threads: collections.Counter[str] = collections.Counter()
    total = 0
    for line in args.path.read_text().splitlines():
        stack, _, count = line.rpartition(' ')
        n = int(count)
        frames = stack.split(';')
        total += n
        threads[frames[0]] += n
        own[frames[-1]] += n
        for frame in set(frames[1:]):
            if args.filter in frame:
                incl[frame] += n
    print(f'{total} samples')
    for name, n in threads.most_common(5):
        print(f'  thread {name}: {n / total:.0%}')
    print('-- own')
    for name, n in own.most_common(args.top):
        print(f'{n / total:6.1%}  {name}')
    print('-- inclusive')
    for name, n in incl.most_common(args.top):
        print(f'{n / total:6.1%}  {name}')


if __name__ == '__main__':
    main()
