"""Plain threaded Python under control: ``threading``, ``queue`` and ``time.sleep``.

:class:`~dnsse.frameworks.threads.framework.ThreadsFramework` swaps the
``threading`` primitives for controlled ones whose every operation is a
scheduling point, and traces the target's own code so that reads and writes
of shared state are scheduling points too.
"""
