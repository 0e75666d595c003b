#!/usr/bin/env bash
# The instructions of each timed loop of `pvar bench` (cli/src/bench/loops.rs,
# every loop `#[inline(never)]`), from the release binary: for each loop
# function, the instructions of its innermost backward branch's range
# (the timed loop), so that each row's loop can be compared with its
# floor's: same reloads, same branches, the update in place of the
# thread-local add.
#
#   scripts/bench-shapes.sh [LOOP...]   # default: every loop
#
# Exits non-zero if a loop is missing from the binary, or if a loop's hot
# path reloads a value from the stack (a `(%rsp)` or `(%rbp)` operand) or
# branches on the iteration count's low bit (`test $0x1`): the two shapes
# user code does not have.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p pvar-cli >&2
bin=target/release/pvar
loops=("$@")
if [ ${#loops[@]} -eq 0 ]; then
    loops=(thread_local_inc thread_local_clobber_inc thread_local_inc_dec
        thread_local_clobber_inc_dec thread_local_add thread_local_clobber_add thread_local_f64_add
        thread_local_clobber_f64_add prometheus_inc metrics_inc
        counter_inc local_counter_inc aggregate_add level_inc_dec watermark_update
        counter_macro_inc aggregate_macro_u64_add aggregate_macro_f64_add
        level_macro_inc_dec high_watermark_macro_update event_raise)
fi
python3 - "$bin" "${loops[@]}" <<'PY'
import re, subprocess, sys
binary, names = sys.argv[1], sys.argv[2:]
syms = subprocess.run(["nm", "-C", binary], capture_output=True, text=True, check=True).stdout
bad = 0
for name in names:
    addrs = sorted({int(l.split()[0], 16) for l in syms.splitlines()
                    if re.search(r" pvar::bench::loops::%s(<.*>)?(::h[0-9a-f]+)?$" % name, l)})
    if not addrs:
        print(f"--- {name}: not in {binary}"); bad += 1; continue
    for a in addrs:
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={a:#x}",
                              f"--stop-address={a + 4096:#x}", binary],
                             capture_output=True, text=True, check=True).stdout
        ins = []
        for line in out.splitlines():
            m = re.match(r"\s+([0-9a-f]+):\t(.*)", line)
            if m:
                ins.append((int(m.group(1), 16), m.group(2).strip()))
                if m.group(2).startswith("ret") or m.group(2).startswith("int3"):
                    break
        # The timed loop: a backward branch right after the iteration
        # count's step (`dec %reg`, or `add $0x1` / `inc` then `cmp`); the
        # clock's own loops (in `Stamp`) do not step a counter so. Per loop
        # head, the shortest such range: the hot path (a slow path placed
        # after it jumps back to the same head). The compiler may version a
        # loop (e.g. on a flag the handle holds): every version is shown.
        heads = {}
        for k, (addr, text) in enumerate(ins):
            m = re.match(r"j\w+\s+([0-9a-f]+)\s", text + " ")
            if not m or k == 0:
                continue
            prev = ins[k - 1][1]
            prev2 = ins[k - 2][1] if k >= 2 else ""
            steps = re.match(r"dec\s+%r", prev) or (
                prev.startswith("cmp") and re.match(r"(add\s+\$0x1,|inc\s+)%r", prev2))
            target = int(m.group(1), 16)
            # A rotated loop: its head is the step, `cmp` and the exit.
            at = [k2 for k2, (x, _) in enumerate(ins) if x == target]
            if not steps and at and at[0] + 1 < len(ins):
                head, nxt = ins[at[0]][1], ins[at[0] + 1][1]
                steps = re.match(r"(add\s+\$0x1,|inc\s+)%r", head) and nxt.startswith("cmp")
            if steps and a <= target < addr and (target not in heads or addr < heads[target]):
                heads[target] = addr
        if not heads:
            print(f"--- {name} @ {a:#x}: no loop found"); bad += 1; continue
        for n, (head, end) in enumerate(sorted(heads.items())):
            body = [re.sub(r" <[^>]*>$", "", t) for addr, t in ins if head <= addr <= end]
            flags = []
            if any(re.search(r"\((%rsp|%rbp)\)", t) and not t.startswith("lea") for t in body):
                flags.append("reads the stack")
            if any(re.match(r"test\s+\$0x1,", t) for t in body):
                flags.append("branches on the low bit")
            version = f" (version {n + 1} of {len(heads)})" if len(heads) > 1 else ""
            print(f"--- {name} @ {a:#x}{version}: {len(body)} instructions per iteration"
                  + (f"  ** {', '.join(flags)}" if flags else ""))
            for t in body:
                print("    " + t)
            bad += bool(flags)
sys.exit(1 if bad else 0)
PY
