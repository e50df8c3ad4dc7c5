#!/usr/bin/env python3
"""Checks sim/bench/schedrec.py's figures on a hand-written `perf script` text and its reader of
gmpsim's `os placement:` line, and placement_check.py's judgement of a difference.
Usage: schedrec_check.py SOURCE_DIR"""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "sim", "bench"))
import placement_check  # noqa: E402
import schedrec  # noqa: E402

# Process 100 ("t.test" after its exec from "sh") with threads 100 and 101 on 2 CPUs; process 500
# ("other") shares the machine. Times in seconds, as perf prints them. What happens:
#   1.000000  100 (on CPU 0) creates 101: the span starts (first event under t.test)
#   1.000100  CPU 1 switches from 500 to 101 (101's first run: not a migration)
#   1.000200  100 sleeps on CPU 0, which goes idle
#   1.000310  100 is woken (wake-up 1) onto CPU 0, which idles: 10 us of CPU 0's wake-up, not a
#             wait behind a busy CPU
#   1.000320  100 runs on CPU 0, its previous CPU (on_prev)
#   1.000400  101 is preempted on CPU 1 by 500: runnable, but no CPU idles
#   1.000500  100 sleeps, CPU 0 goes idle: 101, queued on busy CPU 1, waits with an idle CPU for 300 us
#   1.000800  101 runs on CPU 0 (migration 1)
#   1.000900  100 is woken (wake-up 2) from CPU 1 while both CPUs are busy
#   1.001000  100 runs on CPU 1, not its previous CPU (migration 2)
#   1.001100  101 sleeps on CPU 0, which goes idle
#   1.001200  101 is woken (wake-up 3) onto idle CPU 0; runs at 1.001250 (on_prev): a wake-up, not a wait
#   1.001300  a wake-up of 100 while it runs: not a wake-up
#   1.001400  100 exits; 1.001500 101 exits: the span ends (1.5 ms)
# By hand: wakeups 3, on_prev 2/3, migrations 2 / 1.5 ms = 1333.3/s, idle wait 300 us / 1.5 ms =
# 200 ms/s.
SWITCH = "sched:sched_switch: prev_comm=%s prev_pid=%d prev_prio=120 prev_state=%s ==> next_comm=%s next_pid=%d next_prio=120"
WAKEUP = "sched:sched_wakeup: comm=%s pid=%d prio=120 target_cpu=%03d"
PERF_TEXT = """\
# ========
# captured on    : Mon Jan  1 00:00:00 2024
# nrcpus online : 2
# nrcpus avail : 2
# ========
#
              sh   100/100   [000]     0.998000: sched:sched_stat_runtime: comm=sh pid=100 runtime=5000 [ns]
           other   500/500   [001]     0.999000: sched:sched_stat_runtime: comm=other pid=500 runtime=5000 [ns]
          t.test   100/100   [000]     1.000000: sched:sched_process_fork: comm=t.test pid=100 child_comm=t.test child_pid=101
          t.test   100/100   [000]     1.000000: sched:sched_wakeup_new: comm=t.test pid=101 prio=120 target_cpu=001
           other   500/500   [001]     1.000100: {sw_500_101}
          t.test   100/100   [000]     1.000200: {sw_100_idle}
          t.test   100/101   [001]     1.000300: sched:sched_waking: comm=t.test pid=100 prio=120 target_cpu=000
         swapper     0/0     [000]     1.000310: {wk_100_cpu0}
         swapper     0/0     [000]     1.000320: {sw_idle_100}
          t.test   100/101   [001]     1.000400: {sw_101_500_preempt}
          t.test   100/100   [000]     1.000500: {sw_100_idle}
           other   500/500   [001]     1.000600: sched:sched_stat_runtime: comm=other pid=500 runtime=200000 [ns]
         swapper     0/0     [000]     1.000800: {sw_idle_101}
           other   500/500   [001]     1.000850: sched:sched_wakeup: comm=other pid=501 prio=120 target_cpu=001
           other   500/500   [001]     1.000900: {wk_100_cpu1}
           other   500/500   [001]     1.001000: {sw_500_100}
          t.test   100/101   [000]     1.001100: {sw_101_idle}
         swapper     0/0     [000]     1.001200: {wk_101_cpu0}
         swapper     0/0     [000]     1.001250: {sw_idle_101}
          t.test   100/101   [000]     1.001300: {wk_100_cpu1}
          t.test   100/100   [001]     1.001400: {sw_100_exit}
          t.test   100/101   [000]     1.001500: {sw_101_exit}
           other   500/500   [001]     1.002000: sched:sched_stat_runtime: comm=other pid=500 runtime=5000 [ns]
""".format(
    sw_500_101=SWITCH % ("other", 500, "S", "t.test", 101),
    sw_100_idle=SWITCH % ("t.test", 100, "S", "swapper/0", 0),
    wk_100_cpu0=WAKEUP % ("t.test", 100, 0),
    sw_idle_100=SWITCH % ("swapper/0", 0, "R", "t.test", 100),
    sw_101_500_preempt=SWITCH % ("t.test", 101, "R+", "other", 500),
    sw_idle_101=SWITCH % ("swapper/0", 0, "R", "t.test", 101),
    wk_100_cpu1=WAKEUP % ("t.test", 100, 1),
    sw_500_100=SWITCH % ("other", 500, "S", "t.test", 100),
    sw_101_idle=SWITCH % ("t.test", 101, "S", "swapper/0", 0),
    wk_101_cpu0=WAKEUP % ("t.test", 101, 0),
    sw_100_exit=SWITCH % ("t.test", 100, "X", "swapper/1", 0),
    sw_101_exit=SWITCH % ("t.test", 101, "X", "swapper/0", 0),
)


class Metrics(unittest.TestCase):
    def check(self, text):
        a = schedrec.analyse(text.splitlines(), 100, "t.test")
        m = a.metrics()
        self.assertEqual(a.threads, {100, 101})
        self.assertAlmostEqual(m["span_s"], 0.0015, places=9)
        self.assertEqual(m["wakeups"], 3)
        self.assertAlmostEqual(m["on_prev"], 2 / 3, places=9)
        self.assertAlmostEqual(m["migrations_per_s"], 2 / 0.0015, places=6)
        self.assertAlmostEqual(m["idle_wait_ms_per_s"], 0.30 / 0.0015, places=6)
        # The wait for a CPU after each wake-up (all three slept under 1 ms): 10, 100 and 50 us.
        self.assertEqual([round(x, 6) for x in a.delays["short"]], [0.010, 0.100, 0.050])
        self.assertEqual(a.delays["long"], [])
        return a

    def test_with_sched_wakeup(self):
        a = self.check(PERF_TEXT)
        self.assertEqual(a.wake_event, "sched_wakeup")

    def test_with_sched_waking_only(self):
        # A recording without sched_wakeup marks wake-ups by sched_waking: the same figures when
        # the waking events stand where the wake-up events stood.
        lines = [l for l in PERF_TEXT.splitlines() if "sched_waking" not in l]
        a = self.check("\n".join(l.replace("sched_wakeup:", "sched_waking:") for l in lines))
        self.assertEqual(a.wake_event, "sched_waking")

    def test_other_process_is_not_counted(self):
        # Seen from process 500's side: it never sleeps and is woken, and it never migrates.
        m = schedrec.analyse(PERF_TEXT.splitlines(), 500, "other").metrics()
        self.assertEqual(m["wakeups"], 0)
        self.assertIsNone(m["on_prev"])
        self.assertEqual(m["migrations_per_s"], 0)


SIM_OUTPUT = """\
GOMAXPROCS=2 cores=2 seed=1
ended: program exited (status 0) at 26.220ms virtual, 11337191 scheduler events
BenchmarkChanPingPong-2	  100000	       260.8 ns/op
OS placement (affine): 70 on their free previous core, 148 woken in place on a busy one, 5 on another free core, 0 pulled by an idle core
os placement: wakeups=223 on_prev=0.9686 migrations_per_s=190.69 idle_wait_ms_per_s=12.5
events: GoCreate=6
"""


class SimLine(unittest.TestCase):
    def test_parse(self):
        m = schedrec.parse_sim(SIM_OUTPUT)
        self.assertEqual(m["wakeups"], 223)
        self.assertAlmostEqual(m["on_prev"], 0.9686)
        self.assertAlmostEqual(m["migrations_per_s"], 190.69)
        self.assertAlmostEqual(m["idle_wait_ms_per_s"], 12.5)
        self.assertAlmostEqual(m["span_s"], 0.02622)

    def test_no_wakeups_and_absent_line(self):
        m = schedrec.parse_sim(SIM_OUTPUT.replace("wakeups=223 on_prev=0.9686", "wakeups=0 on_prev=nan"))
        self.assertEqual(m["wakeups"], 0)
        self.assertIsNone(m["on_prev"])
        self.assertIsNone(schedrec.parse_sim(SIM_OUTPUT.replace("os placement:", "os placement")))
        self.assertIsNone(schedrec.parse_sim(SIM_OUTPUT.replace("wakeups=223", "wakeups=x")))


class Judgement(unittest.TestCase):
    def test_rates(self):
        differs = placement_check.differs
        self.assertFalse(differs("migrations_per_s", 100.0, 119.0))
        self.assertTrue(differs("migrations_per_s", 100.0, 121.0))
        self.assertTrue(differs("migrations_per_s", 100.0, 79.0))
        # Near zero: a difference under the metric's floor is no difference.
        self.assertFalse(differs("migrations_per_s", 0.0, placement_check.FLOORS["migrations_per_s"] * 0.9))
        self.assertTrue(differs("migrations_per_s", 0.0, placement_check.FLOORS["migrations_per_s"] * 1.1))
        self.assertFalse(differs("idle_wait_ms_per_s", 0.0, 0.0))
        self.assertIsNone(differs("idle_wait_ms_per_s", None, 3.0))

    def test_on_prev_in_points(self):
        differs = placement_check.differs
        self.assertFalse(differs("on_prev", 0.50, 0.69))
        self.assertTrue(differs("on_prev", 0.50, 0.71))
        self.assertIsNone(differs("on_prev", None, 0.5))
        self.assertTrue(math.isinf(placement_check.ratio(0.0, 2.0)))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
