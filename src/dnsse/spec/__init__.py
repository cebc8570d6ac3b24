"""Specifications: LTL over the events of a run (DESIGN §4).

``parse`` turns text into a formula, ``Automaton``/``Monitor`` judge a run
position by position, ``load_suite`` gathers the properties of a campaign
(``--spec``, spec files, ``DNSSE_SPECS`` in the target) and ``SpecSuite``
attaches them to executions. docs/events.md has the language and the events.
"""

from dnsse.spec.automaton import Automaton
from dnsse.spec.monitor import Monitor, Verdict
from dnsse.spec.parser import SpecSyntaxError, parse
from dnsse.spec.sources import load_suite, parse_property
from dnsse.spec.watch import SpecSuite

__all__ = ["Automaton", "Monitor", "SpecSuite", "SpecSyntaxError", "Verdict", "load_suite", "parse", "parse_property"]
