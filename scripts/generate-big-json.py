#!/usr/bin/env python3
"""Writes a large JSON document for import, export and big-write tests, in Kindling's export form.

The document is canonical: compact, keys in the order the server keeps them, numbers as the
server writes them, priorities last in their objects. So `kindling export` of a namespace that
imported it gives back exactly the same bytes, which `scripts/bigdata-bench.py import` checks.

Half of it is one wide object ("flat", one child per record), half is nested groups of 1000
records ("groups"); every tenth record has a priority. Each record holds three values
(`n`, a number; `name` and `text`, ASCII strings), about 100 bytes of JSON per value.

  scripts/generate-big-json.py --mb 3072 big.json            # a 3 GB file
  scripts/generate-big-json.py --values 2400000 put.json     # 2.4 million values (about 250 MB)
"""
import argparse
import sys


def record(index):
    name = ("name-%09d-" % index) * 5
    text = ("text %09d " % index) * 12
    body = '{"n":%d,"name":"%s","text":"%s"' % (index * 7 % 1000003, name, text)
    if index % 10 == 0:
        body += ',".priority":%d' % (index % 97)
    return body + "}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--mb", type=float, help="about this many megabytes (MiB)")
    size.add_argument("--values", type=int, help="about this many leaf values (three per record)")
    parser.add_argument("output", help="the file to write ('-' for standard output)")
    arguments = parser.parse_args()
    records = arguments.values // 3 if arguments.values else int(arguments.mb * 1024 * 1024 / len(record(10**8)))
    records = max(2, records)
    out = sys.stdout if arguments.output == "-" else open(arguments.output, "w", buffering=1 << 20)
    flat = records // 2
    out.write('{"flat":{')
    for index in range(flat):
        out.write(('"r%09d":' if index == 0 else ',"r%09d":') % index)
        out.write(record(index))
    out.write('},"groups":{')
    for index in range(flat, records):
        local = index - flat
        if local % 1000 == 0:
            out.write(("" if local == 0 else "},") + '"g%06d":{' % (local // 1000))
        else:
            out.write(",")
        out.write('"r%09d":%s' % (index, record(index)))
    out.write('}}}')
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
