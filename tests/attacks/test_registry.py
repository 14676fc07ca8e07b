"""The attack registry: every attack the audit and the command line accept is a spec, each spec's scoring
function follows the one signature and reproduces the attack functions called by hand; attacks never import
the metrics layer."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import mipkit.attacks
from mipkit._validation import MipkitValueError
from mipkit.attacks import (
    ATTACKS,
    AttackInputs,
    AttackSpec,
    attack_names,
    cross_entropy_loss,
    get_attack,
    lira_offline,
    lira_online,
    logit_confidence,
    ltu_loss_game,
    rmia_scores,
    true_class_probability,
    tune_rmia_a,
)
from mipkit.attacks.registry import attack_rows, run_score_attacks
from mipkit.game.trainers import TrainerSpec, predict_full_proba

ATTACKS_DIR = Path(mipkit.attacks.__file__).parent


@pytest.fixture(scope="module")
def outputs():
    """Six random forests on random halves of 80 records (noisy labels: they memorise)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(80, 6, n_informative=4, flip_y=0.2, random_state=1)
    rng = np.random.default_rng(0)
    in_mask = np.stack([rng.permutation(80) < 40 for _ in range(6)])
    trainer = TrainerSpec("sklearn.ensemble.RandomForestClassifier", {"n_estimators": 10})
    probs = np.stack(
        [predict_full_proba(trainer.build(k).fit(X[m], y[m]), X, 2) for k, m in enumerate(in_mask)]
    )
    return probs, y, in_mask


def test_registry_lists_every_attack_the_cli_accepts():
    from mipkit.workflows.audit.config import AuditConfig

    assert attack_names() == ("loss", "lira", "rmia", "ltu")
    for name in attack_names():
        assert AuditConfig(model="m.M", attacks=(name,)).attacks == (name,)
    with pytest.raises(MipkitValueError, match="subset of loss, lira, rmia, ltu"):
        AuditConfig(model="m.M", attacks=("shadow",))
    # the command's help names exactly the registry's attacks
    import typer

    from mipkit.cli import audit as cli_audit

    app = typer.Typer()
    cli_audit.register(app)
    command = typer.main.get_command(app)
    option = next(p for p in command.params if p.name == "attacks")
    listed = option.help.split("subset of", 1)[1].strip(" .").split(", ")
    assert tuple(listed) == attack_names()
    assert tuple(cli_audit.DEFAULTS["attacks"].split(",")) == AuditConfig().attacks


def test_specs_are_frozen_and_described():
    rows = [row for spec in ATTACKS.values() for row in spec.rows]
    assert rows == ["loss", "lira-online", "lira-offline", "rmia-online", "rmia-offline", "ltu"]
    assert attack_rows(["rmia", "loss"]) == ("loss", "rmia-online", "rmia-offline")
    for name, spec in ATTACKS.items():
        assert isinstance(spec, AttackSpec) and spec.name == name and spec.citation
        assert spec.family in ("score", "game") and spec.needs
        with pytest.raises(dataclasses.FrozenInstanceError):
            spec.name = "other"
    assert ATTACKS["loss"].needs == {"target outputs"}
    assert ATTACKS["lira"].needs == ATTACKS["rmia"].needs == {"target outputs", "reference models"}
    with pytest.raises(TypeError):
        ATTACKS["new"] = ATTACKS["loss"]  # read-only mapping
    with pytest.raises(MipkitValueError, match="Known attacks: loss, lira, rmia, ltu"):
        get_attack("shadow")
    with pytest.raises(MipkitValueError):
        AttackSpec("x", "guess", ("x",), frozenset(), lambda inputs: None)


def test_scoring_functions_equal_the_attacks_called_by_hand(outputs):
    """Leave-one-out over models: each target attacked with the other models as its references."""
    probs, y, in_mask = outputs
    targets = np.array([0, 3])
    inputs = AttackInputs(probs=probs, y=y, in_mask=in_mask, targets=targets)
    scores, settings = run_score_attacks(inputs, ("rmia", "lira", "loss"))
    assert list(scores) == ["loss", "lira-online", "lira-offline", "rmia-online", "rmia-offline"]
    conf, p = logit_confidence(probs, y), true_class_probability(probs, y)
    for j, t in enumerate(targets):
        refs = np.array([k for k in range(6) if k != t])
        np.testing.assert_array_equal(scores["loss"][j], -cross_entropy_loss(probs[t], y))
        np.testing.assert_array_equal(
            scores["lira-online"][j], lira_online(conf[t], conf[refs], in_mask[refs])
        )
        np.testing.assert_array_equal(
            scores["lira-offline"][j], lira_offline(conf[t], conf[refs], in_mask[refs])
        )
        np.testing.assert_array_equal(
            scores["rmia-online"][j], rmia_scores(p[t], p[refs], in_mask[refs], p[t], p[refs], online=True)
        )
        a = tune_rmia_a(p[refs], in_mask[refs], p[refs], n_targets=1, random_state=int(t))
        assert settings["rmia_a"][str(t)] == a
        np.testing.assert_array_equal(
            scores["rmia-offline"][j], rmia_scores(p[t], p[refs], in_mask[refs], p[t], p[refs], a=a)
        )
    assert all(np.isfinite(s).all() for s in scores.values())


def test_infinite_scores_keep_their_order(outputs):
    """LiRA on saturated outputs can give +-inf; the registry maps them just beyond the finite range."""
    probs, y, in_mask = outputs

    def spiky(inputs):
        base = np.tile(np.linspace(0.0, 1.0, inputs.y.size), (len(inputs.targets), 1))
        base[0, :3] = [np.inf, -np.inf, np.nan]
        return mipkit.attacks.AttackOutput(scores={"spiky": base})

    spec = AttackSpec("spiky", "score", ("spiky",), frozenset({"target outputs"}), spiky, "test")
    inputs = AttackInputs(probs=probs, y=y, in_mask=in_mask, targets=np.array([0]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("mipkit.attacks.registry.ATTACKS", {**ATTACKS, "spiky": spec})
        scores, _ = run_score_attacks(inputs, ["spiky"])
    s, finite = scores["spiky"][0], np.linspace(0.0, 1.0, y.size)[3:]
    assert s[0] == finite.max() + 1.0 and s[1] == s[2] == finite.min() - 1.0
    np.testing.assert_array_equal(s[3:], finite)


def test_ltu_spec_plays_the_loss_game_on_the_targets(outputs):
    probs, y, in_mask = outputs
    targets = np.array([1, 2])
    inputs = AttackInputs(probs=probs, y=y, in_mask=in_mask, targets=targets, random_state=7)
    game = ATTACKS["ltu"].score(inputs).game
    by_hand = ltu_loss_game(cross_entropy_loss(probs, y)[targets], in_mask[targets], random_state=7)
    assert game.accuracy == by_hand.accuracy and game.privacy == by_hand.privacy
    assert game.strategy == "loss" and game.accuracy.trials == 2 * 40


def test_ltu_loss_game_matches_a_direct_loop(outputs):
    """The rounds by a plain loop over models (the audit's former LTU code): same seed, same draws, same
    verdicts, so the audit's numbers did not move when LTU moved into attacks/ltu.py."""
    probs, y, in_mask = outputs
    loss = cross_entropy_loss(probs, y)
    loss[2, :5] = loss[2, 40:45] = 1.0  # some exact ties, settled by the coin
    rng = np.random.default_rng(11)
    correct = rounds = 0
    for t in range(6):
        members = rng.permutation(np.flatnonzero(in_mask[t]))
        others = rng.permutation(np.flatnonzero(~in_mask[t]))
        m = min(members.size, others.size)
        ld, lr = loss[t, members[:m]], loss[t, others[:m]]
        coin = rng.random(m) < 0.5
        correct += int(np.sum((ld < lr) | ((ld == lr) & coin)))
        rounds += m
    res = ltu_loss_game(loss, in_mask, random_state=11)
    assert (res.accuracy.successes, res.accuracy.trials) == (correct, rounds)
    acc = correct / rounds
    assert res.privacy == min(2 * (1 - acc), 1) and res.privacy_error == 2 * np.sqrt(acc * (1 - acc) / rounds)
    assert np.isnan(res.utility) and res.scenario == "fitted" and res.per_record["model"].nunique() == 6


def test_ltu_loss_game_refuses_bad_input():
    with pytest.raises(MipkitValueError, match="shape of loss"):
        ltu_loss_game(np.zeros((2, 4)), np.zeros((2, 3), dtype=bool))
    with pytest.raises(MipkitValueError, match="both members and non-members"):
        ltu_loss_game(np.zeros((1, 4)), np.ones((1, 4), dtype=bool))
    with pytest.raises(MipkitValueError):
        AttackInputs(probs=np.zeros((2, 4, 2)), y=np.zeros(4, int), in_mask=np.zeros((2, 4)), targets=[5])


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", sorted(ATTACKS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_attacks_never_import_metrics(path):
    """Measuring stays apart from attacking (layers: attacks and metrics are peers above stats)."""
    bad = {m for m in _imports(path) if m == "mipkit.metrics" or m.startswith("mipkit.metrics.")}
    bad |= {m for m in _imports(path) if m.startswith(("mipkit.workflows", "mipkit.cli", "mipkit.report"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_stats_is_a_bottom_layer():
    import mipkit.stats

    imported = {m for m in _imports(Path(mipkit.stats.__file__)) if m.startswith("mipkit")}
    assert imported <= {"mipkit._validation", "mipkit._random"}, imported
