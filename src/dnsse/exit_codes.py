"""The exit statuses of ``dnsse`` (DESIGN §4), in one place for every process that ends a campaign.

The command line, the supervising process that restarts a campaign whose
process became unfit, and the supervisor's reading of how its child ended
all speak these numbers; scripts and CI read them.
"""

CLEAN = 0  # no bug found (a replay: the bug no longer shows)
BUG = 1  # a bug found (a replay: the bug shows again)
BAD_INPUT = 2  # the user must fix the command, the target or an API we do not control
INTERNAL = 3  # dnsse itself failed, with its traceback
# A campaign process asks its supervisor for a fresh process to resume in (threads that would not stop,
# memory a program exhausted): never seen by the user.
RESTART = 75
INTERRUPTED = 130  # stopped by Ctrl-C (SIGINT), the reports so far written
TERMINATED = 143  # stopped by SIGTERM, the reports so far written

# What a campaign process exits with by itself: anything else is a death the supervisor reports.
OWN = frozenset({CLEAN, BUG, BAD_INPUT, INTERNAL, INTERRUPTED, TERMINATED})
