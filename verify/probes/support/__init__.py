"""What the probe modules share: runs of the engines as series (``runs``), the classification of a tail
(``classify``), the derived leading terms of the interior case (``interior``), findings and their records
(``findings``), the seed ensembles of the stochastic probes (``seeds``), the online-SGD learners (``sgd``),
Monte Carlo losses (``montecarlo``), the finite-horizon tail facts certified by the full-matrix engine's Arb balls
(``certified``), the figure helpers (``figures``), the :class:`~.probe.Probe` base class
(``probe``) and the ``probe`` part of ``verify all`` (``probe_parts``). Not probes: the catalogue skips subpackages.
"""
