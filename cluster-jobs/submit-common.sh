# SPDX-License-Identifier: BSD-3-Clause
# What submit-slurm.sh and submit-pbs.sh share: the dry run, and reading and sizing the job from
# the trace. Sourced by them (not run); expects $cpreplay and $script (the submitting script's name).

# CPREPLAY_DRY_RUN=1 prints the submit command instead of running it: the rank count is still read
# from the trace and checked, so a job can be tried out where there is no batch system.
run() {
  if [ "${CPREPLAY_DRY_RUN:-0}" != 0 ]; then
    local line
    printf -v line '%q ' "$@"
    echo "${line% }"
  else
    "$@"
  fi
}

# size_job EXPERIMENT [PROCESSES]: sets anchor, ranks, events, processes (default: one per rank),
# per_process and mb (memory a process needs), and says them on stderr; exits 2 on a bad count.
size_job() {
  anchor="$1/traces.otf2"
  ranks=$("$cpreplay" --count-ranks "$anchor")
  events=$("$cpreplay" --count-events "$anchor")
  processes=${2:-$ranks}
  local ok
  case "$processes" in
    '' | *[!0-9]* | 0*) ok=0 ;;
    *) ok=$(( processes <= ranks )) ;;
  esac
  if [ "$ok" != 1 ]; then
    echo "$script: -n must be a whole number of processes from 1 to $ranks (the MPI ranks" \
         "of $anchor), not '$processes'" >&2
    exit 2
  fi
  # Sizing (bench/RESULTS.md): a process needs about 20 MB, plus 30 bytes per event and 25 kB
  # per rank of the ranks it holds; the largest holds ceil(ranks / processes) ranks. (Process 0
  # also gathers the report's rows, up to 64 MB more.)
  per_process=$(( (ranks + processes - 1) / processes ))
  local events_per=$(( (events * per_process + ranks - 1) / ranks ))
  mb=$(( 20 + (events_per * 30 + 999999) / 1000000 + (per_process * 25 + 999) / 1000 ))
  echo "$script: $anchor: $ranks ranks, $events events; $processes processes of up to" \
       "$per_process ranks ($events_per events) need about $mb MB each" >&2
}
