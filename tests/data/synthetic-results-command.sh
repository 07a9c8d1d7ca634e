#!/bin/sh
# A synthetic stand-in for a command under `kgate ab --base-cmd/--head-cmd` (a Python suite, an
# nvbench binary and its conversion), for the tests of kgate ab on machines without a GPU:
# `sh synthetic-results-command.sh DIR SIDE` logs what kgate ab told it to DIR/calls.log as
# "SIDE round <KGATE_ROUND> filter <KGATE_FILTER>" and copies the canned results of its round,
# DIR/SIDE-<KGATE_ROUND>.json, to $KGATE_OUT, which must be an absolute path.
set -eu
dir=$1
side=$2
echo "$side round $KGATE_ROUND filter $KGATE_FILTER" >> "$dir/calls.log"
case $KGATE_OUT in
  /*) ;;
  *) echo "synthetic-results-command: KGATE_OUT is not an absolute path: $KGATE_OUT" >&2; exit 2 ;;
esac
cp "$dir/$side-$KGATE_ROUND.json" "$KGATE_OUT"
