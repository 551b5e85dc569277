#!/bin/sh
# Build report.json from the application logs in raw/:
#
#   raw/*.log --step1_extract--> build/events.jsonl --step2_clean--> build/clean.jsonl
#             --step3_aggregate--> report.json
#
# A step is skipped when its output already exists, so re-running after a
# failure only redoes the steps that had not finished.
set -e
cd "$(dirname "$0")"
mkdir -p build

run_step() {  # run_step SCRIPT INPUT OUTPUT
    if [ -e "$3" ]; then
        echo "skip $1: $3 already exists"
        return 0
    fi
    echo "run  $1: $2 -> $3"
    python3 "$1" "$2" "$3"
}

run_step step1_extract.py raw build/events.jsonl
run_step step2_clean.py build/events.jsonl build/clean.jsonl
run_step step3_aggregate.py build/clean.jsonl report.json
echo "done: report.json"
