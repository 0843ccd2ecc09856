"""The serving benchmark (``spectrace bench --workload``) on the CPU: request kinds split by the
vocabulary (and the weight edit that gives each its own draft acceptance), the seeded arrival
schedule, streaming requests against the HTTP stand-in (tests/http_standin.py), and the
per-phase tables and the picture over time."""

from __future__ import annotations

import pytest

from spectrace.bench import kinds


def test_the_kinds_split_the_vocabulary_into_disjoint_sets_inside_its_edges():
    split = kinds.split_vocabulary(1000, seed=3)
    assert split == kinds.split_vocabulary(1000, seed=3) != kinds.split_vocabulary(1000, seed=4)
    sets = [set(ids) for ids in split.sets.values()]
    assert list(split.sets) == ["accepted", "half", "never"]
    assert all(len(s) == len(sets[0]) and len(s) % 2 == 0 and len(s) > 300 for s in sets)
    assert not (sets[0] & sets[1]) and not (sets[1] & sets[2]) and not (sets[0] & sets[2])
    assert min(min(s) for s in sets) >= kinds.EDGE and max(max(s) for s in sets) < 1000 - kinds.EDGE
    with pytest.raises(ValueError, match="too small"):
        kinds.split_vocabulary(30)


def test_each_kinds_greedy_continuation_stays_in_its_set():
    split = kinds.split_vocabulary(1000, seed=0)
    source = kinds.target_rows(split, 1024)  # rows past the split (padding) keep their own
    assert sorted(source) == list(range(1024)) and source[1000:] == list(range(1000, 1024))
    for regime, ids in split.sets.items():
        for x in ids[:50]:
            walk = [x]
            for _ in range(6):
                walk.append(kinds.greedy_next(split, walk[-1]))
            assert all(source[y] == prev for prev, y in zip(walk, walk[1:]))  # the row that holds prev's embedding
            assert {split.regime_of(t) for t in walk} == {regime}
            if regime == "accepted":
                assert walk == [x] * 7
            elif regime == "half":
                assert walk[0::2] == [x] * 4 and walk[1] != x and walk[1::2] == [walk[1]] * 3
            else:  # no return within six steps: the draft's guess two positions on is always wrong
                assert len(set(walk)) == 7


def simulated_accept_length(target_head, draft_head, embed, prompt_token: int, steps: int = 3, verify_steps: int = 8):
    """Greedy decoding of the edited toy models as the dummy engine runs them (every layer adds
    nothing, so a position's hidden state is its token's embedding): the target's token is the
    argmax of its lm_head over the last token's embedding; the EAGLE-3 draft reads the hidden state
    of the position before the newest token and proposes the argmax of its lm_head over it at each
    of its steps. Tokens per verify step, bonus included."""
    import torch

    def argmax(head, token):
        return int(torch.argmax(head @ embed[token]))

    seq = [prompt_token, argmax(target_head, prompt_token)]
    accepted = 0
    for _ in range(verify_steps):
        proposal = [argmax(draft_head, seq[-2])] * steps
        truth = []
        for _ in range(steps + 1):
            truth.append(argmax(target_head, (seq + truth)[-1]))
        n = 0
        while n < steps and proposal[n] == truth[n]:
            n += 1
        seq += truth[:n + 1]
        accepted += n + 1
    return accepted / verify_steps, seq


def test_the_kinds_edit_gives_each_set_its_own_draft_acceptance(monkeypatch):
    torch = pytest.importorskip("torch")
    from bench_toys import toy_llama

    from spectrace.bench import drafts

    torch.manual_seed(0)
    vocab, h = 240, 64
    monkeypatch.setenv(drafts.ENV_VOCAB, str(vocab))
    target, draft = toy_llama(h, vocab, draft=False), toy_llama(h, vocab, draft=True)
    line = drafts.edit_model(target, "kinds", "target")
    assert "mapped per set of a split of 240 tokens (72 accepted, 72 half, 72 never; seed 0)" in line
    drafts.edit_model(draft, "kinds", "draft")
    embed = target.model.embed_tokens.weight.detach()
    split = kinds.split_vocabulary(vocab, 0)
    assert torch.equal(target.lm_head.weight, embed[torch.tensor(kinds.target_rows(split, vocab))])
    heads = target.lm_head.weight.detach(), draft.lm_head.weight.detach()
    for regime, expected in (("accepted", 4.0), ("half", 2.0), ("never", 1.0)):
        for token in split.sets[regime][:10]:
            accept, seq = simulated_accept_length(*heads, embed, token)
            assert accept == expected, (regime, token)
            assert {split.regime_of(t) for t in seq} == {regime}
