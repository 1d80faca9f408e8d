"""What the claim modules share: runs of the engines as series (``runs``), evidence records of runs and
proofs (``records``), the derived leading terms as numbers (``leading``), and the ``claim`` part of
``verify all`` (``part``). Not claims: the catalogue skips subpackages."""
