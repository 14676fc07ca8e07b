"""``mipkit audit-fitted``: audit the fitted model you release, from its file, its training records (members)
and records it did not see (non-members).

A pickle / joblib model file runs code when it is loaded, so it is read only with ``--trust-pickle`` (and a
warning); a ``.skops`` file is checked first and types outside skops' defaults must be named with
``--trusted-type``. Heavy modules are imported inside the command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any

import typer

from mipkit.cli.audit_scores import (
    AttacksOption,
    IdColumnOption,
    SliceByOption,
    attack_names,
    finish,
    measurement,
)
from mipkit.cli.options import (
    AddressOption,
    JsonOption,
    NoReportOption,
    QuietOption,
    RunFolderOption,
    SeedOption,
    flag_table,
    with_options,
)

DEFAULT_N_REFERENCE = 16
"""``--reference-models``' default: :data:`mipkit.workflows.audit_fitted.config.DEFAULT_N_REFERENCE` (the
command line imports no workflow module when it starts)."""

# -- this command's own flags (the shared ones are in mipkit.cli.options) --
FLAGS = flag_table(
    """
--model-file        The fitted model: .skops, or a pickle/joblib file.
--members           CSV/Parquet of the records the model was trained on (raw columns: a Pipeline encodes its
                    own; columns the model was not fitted on are ignored and listed).
--non-members       CSV/Parquet of records it was not trained on (holdout or population).
--target            Label column (a numeric target for a regressor).
--reference-models  Copies of the model retrained for LiRA/RMIA (0: LOSS only; else >= 2), each on a
                    random half of the audited records, or with --population on as many records as the
                    members from the population and audited records.
--population        CSV/Parquet of other records of the population, added to the reference models' pool.
--trust-pickle      Load a pickle/joblib model file (it runs the file's code).
--trusted-type      A type of a .skops file to trust beyond skops' defaults (repeatable).
--backend           local (joblib) or ray, for the reference fits.
--n-jobs            Parallel reference fits (-1: all cores).
"""
)


@contextlib.contextmanager
def model_file_errors() -> Iterator[None]:
    """Say a refused model file in the command line's words: the exact flags that would load it."""
    from mipkit._validation import MipkitValueError
    from mipkit.game.model_files import UntrustedModelFileError

    try:
        yield
    except UntrustedModelFileError as err:
        if err.kind == "pickle":
            raise MipkitValueError(
                f"The model file {err.path} is a pickle: loading it runs code stored in the file, with your "
                "rights. Pass --trust-pickle only if you trust where it came from, or save the model as a "
                ".skops file (skops.io.dump) and pass that."
            ) from None
        flags = " ".join(f"--trusted-type {t}" for t in err.untrusted)
        raise MipkitValueError(
            f"The model file {err.path} holds types that are not trusted by default: "
            f"{', '.join(err.untrusted)}. If you expect them, add: {flags}"
        ) from None


def check_model(path: str, trust_pickle: bool, trusted_types: list[str] | None) -> None:
    """Refuse a model file that would not load, before any other work (the skops types, a pickle); a missing
    file is said after the flags are checked, as any other missing file."""
    from pathlib import Path

    from mipkit.game.model_files import check_model_file

    if not Path(path).is_file():
        return
    with model_file_errors():
        check_model_file(path, trust_pickle=trust_pickle, trusted=trusted_types or ())


def load_model(path: str, trust_pickle: bool, trusted_types: list[str] | None):
    """Load the model file, with the refusals and the pickle warning in the command line's words."""
    import warnings

    from mipkit.game.model_files import PickleLoadWarning, load_model_file

    with model_file_errors(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PickleLoadWarning)
        model = load_model_file(path, trust_pickle=trust_pickle, trusted=trusted_types or ())
    for w in caught:
        if issubclass(w.category, PickleLoadWarning):
            typer.echo(
                f"mipkit: warning: loaded {path} as a pickle (--trust-pickle): the code it holds ran with "
                "your rights.",
                err=True,
            )
    return model


def register(app: typer.Typer) -> None:
    @app.command("audit-fitted")
    @with_options("measure", measurement)
    def audit_fitted(
        model_file: Annotated[str, FLAGS["--model-file"]] = ...,
        members: Annotated[str, FLAGS["--members"]] = ...,
        non_members: Annotated[str, FLAGS["--non-members"]] = ...,
        target: Annotated[str, FLAGS["--target"]] = ...,
        reference_models: Annotated[int, FLAGS["--reference-models"]] = DEFAULT_N_REFERENCE,
        population: Annotated[str | None, FLAGS["--population"]] = None,
        id_column: IdColumnOption = None,
        slice_by: SliceByOption = None,
        trust_pickle: Annotated[bool, FLAGS["--trust-pickle"]] = False,
        trusted_type: Annotated[list[str] | None, FLAGS["--trusted-type"]] = None,
        attacks: AttacksOption = "loss,lira,rmia",
        seed: SeedOption = 0,
        out: RunFolderOption = "runs/audit-fitted",
        backend: Annotated[str, FLAGS["--backend"]] = "local",
        address: AddressOption = None,
        n_jobs: Annotated[int, FLAGS["--n-jobs"]] = -1,
        measure: Any = None,
        as_json: JsonOption = False,
        quiet: QuietOption = False,
        no_report: NoReportOption = False,
    ) -> None:
        """Audit a fitted model: its outputs on members vs non-members (LOSS, LiRA and RMIA)."""
        # long only by its option declarations: flags -> AuditFittedConfig, files -> the release
        check_model(model_file, trust_pickle, trusted_type)  # the seconds of work after it are not wasted
        from mipkit._runfolder import lock_run_folder
        from mipkit.cli._progress import ProgressBar, fits_label
        from mipkit.cli.flag_errors import flag_errors
        from mipkit.cli.options import check_count, check_n_jobs, check_out_folder
        from mipkit.data.io import read_table
        from mipkit.workflows.audit_fitted import AuditFittedConfig, FittedRelease, audit_fitted

        with flag_errors("audit_fitted", {"n_reference": "--reference-models"}):
            config = AuditFittedConfig(  # every setting checked before any file is read
                **measure(),
                seed=seed,
                attacks=attack_names(attacks),
                target=target,
                id_column=id_column,
                slice_by=slice_by or (),
                n_reference=check_count("--reference-models", reference_models, kind="models", minimum=0),
                backend=backend,
                n_jobs=check_n_jobs(n_jobs),
                address=address,
            )
        run_dir = check_out_folder(out)
        model = load_model(model_file, trust_pickle, trusted_type)
        members_table, non_members_table = (read_table(p) for p in (members, non_members))
        pop = read_table(population) if population is not None else None
        # a model of another kind, or members that are non-members, refused before the run folder is made
        release = FittedRelease(model, members_table, non_members_table, population=pop)
        labels = {"reference fits": f"reference {fits_label(backend, n_jobs, address)}"}
        with ProgressBar(enabled=not (quiet or as_json), labels=labels) as progress, lock_run_folder(run_dir):
            result = audit_fitted(release, config, run_dir=run_dir, progress=progress)
            result.write(run_dir, report=not no_report)
        finish(result, run_dir, as_json)
