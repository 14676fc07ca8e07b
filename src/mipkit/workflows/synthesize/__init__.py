"""The synthesize verb: make private synthetic data with a certificate of its privacy.

``synthesize(PrivateTable(table, domain), SynthesizeConfig(method="mst", epsilon=1.0))`` fits a synthesizer
of :mod:`mipkit.synthesizers` and returns a :class:`SynthesizeResult`: its ``summary()`` is the DPIA
paragraph, ``write(out)`` the folder with ``synthetic.csv`` and ``certificate.json`` (docs/synthesize.md).
"""

from mipkit.workflows.synthesize.config import SynthesizeConfig
from mipkit.workflows.synthesize.result import SynthesizeResult
from mipkit.workflows.synthesize.run import synthesize
from mipkit.workflows.synthesize.table import PrivateTable

__all__ = ["PrivateTable", "SynthesizeConfig", "SynthesizeResult", "synthesize"]
