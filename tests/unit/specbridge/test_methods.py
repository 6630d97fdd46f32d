"""Tests of the compared methods: prompts, offline policies and generation."""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest

from neurips26.llm import Message, Scripted
from neurips26.specbridge import mining
from neurips26.specbridge.benchmark import benchmark, generate_tasks, render_spec
from neurips26.specbridge.evaluate import evaluate_spec
from neurips26.specbridge.methods import (
    ALL_METHODS,
    DIRECT_LEXICON,
    METHODS,
    PLAN_METHODS,
    Context,
    Exemplar,
    TaskView,
    build_context,
    exemplar_plan,
    extract_spec,
    fill_slots,
    generate,
    policy,
    prompt,
    select_exemplars,
)
from neurips26.specbridge.minispec.parser import parse_signature, parse_spec
from neurips26.specbridge.minispec.printer import print_spec
from neurips26.specbridge.nlfp import from_markdown, to_markdown
from neurips26.specbridge.patterns import SEED_LIBRARY, Pattern
from neurips26.specbridge.reading import cue_patterns, sentences
from tests.unit.chat_server import ChatServer, client


def cue_retrieve(library, description, signature, k=5):
    """A stand-in retrieval: patterns ranked by summed cue scores over the sentences."""
    scores: dict[str, float] = {}
    for s in sentences(description):
        for p, sc in cue_patterns(s, library, signature):
            scores[p.name] = scores.get(p.name, 0.0) + sc
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    return tuple((library.get(n), sc) for n, sc in ranked)


@cache
def splits():
    return benchmark("smoke"), benchmark("default")


_DONE: dict = {}


def gen(method, task, **kw):
    """``generate`` with the default pool, the seed library and the cue retrieval (plain calls cached)."""
    key = (method, task) if not kw else None
    if key is not None and key in _DONE:
        return _DONE[key]
    kw = {"pool": splits()[1].pool, "library": SEED_LIBRARY, "retrieve": cue_retrieve} | kw
    out = generate(method, task, **kw)
    if key is not None:
        _DONE[key] = out
    return out


def test_policies_are_deterministic_and_blind_to_the_reference():
    smoke, _ = splits()
    for task in smoke.eval[:3]:
        wrong = dataclasses.replace(task, spec=render_spec(task.signature, "True", "False"))
        for m in ALL_METHODS:
            a, b = gen(m, task), gen(m, task, seed=0)  # the second is computed afresh
            c = gen(m, wrong)
            assert a.reply == b.reply == c.reply
            assert a.messages == c.messages


def test_methods_parse_and_each_passes_somewhere():
    # development tasks only: the smoke pool, each with the rest of the default pool as its pool
    smoke, default = splits()
    for m in METHODS:
        parsed = passed = 0
        for task in smoke.pool:
            rest = tuple(t for t in default.pool if t.id != task.id)
            g = gen(m, task, pool=rest)
            ev = evaluate_spec(task, g.spec_text, layers=("computable",))
            parsed += ev.parsed
            passed += bool(ev.computable)
            if m in PLAN_METHODS:
                assert g.plan_text is not None
                from_markdown(g.plan_text)  # the plan is a well-formed NLFP
        assert parsed >= 6, m
        assert passed >= 1, m


def test_prompts_never_show_an_eval_reference_spec():
    smoke, default = splits()
    posts = [t.postcondition.strip() for t in smoke.eval]
    for task in smoke.eval:
        for m in ALL_METHODS:
            text = "\n".join(x.content for x in gen(m, task).messages)
            assert all(p not in text for p in posts), (m, task.id)


def test_exemplars_and_hints_are_shown():
    smoke, default = splits()
    task = smoke.eval[0]
    view = TaskView(task.description, task.signature)
    exs = select_exemplars(default.pool, task.description)
    assert len(exs) == 2 and all(t in default.pool for t in exs)
    ctx = build_context("few_shot", view, pool=default.pool)
    user = prompt("few_shot", view, ctx)[-1].content
    assert exs[0].spec.strip() in user and "## Example 2" in user
    ctx = build_context("specbridge", view, pool=default.pool, library=SEED_LIBRARY, retrieve=cue_retrieve)
    assert 1 <= len(ctx.hints) <= 5
    user = prompt("specbridge", view, ctx)[-1].content
    assert f"### Hint 1: {ctx.hints[0].name}" in user
    assert "## Example" not in prompt("direct", view, Context())[-1].content


def test_specbridge_uses_a_hint_the_seed_lexicon_lacks():
    task = generate_tasks(1, 20, families=("countprefix",))[0]  # a development task, not an evaluation one
    composite = dataclasses.replace(
        SEED_LIBRARY.get("count_matches"),
        name="count_in_prefix",
        cues=("leading", "among the leading"),
        clause_template="`result` counts the elements `x` among the first `⟨k⟩` of `⟨l⟩` with `⟨p⟩`",
        spec_template="result = ((⟨l⟩.take ⟨k⟩).filter (fun x => ⟨p⟩)).length",
    )
    within = dataclasses.replace(
        SEED_LIBRARY.get("index_in_range"), name="k_within", cues=("length of the array",)
    )
    hinted = gen(
        "specbridge", task, pool=(), retrieve=lambda lib, d, s, k=5: ((composite, 1.0), (within, 1.0))
    )
    plain = gen("nlfp", task)
    if "countprefix" in task.id:
        assert "count_in_prefix" in hinted.plan_text and "k_within" in hinted.plan_text
        assert evaluate_spec(task, hinted.spec_text, layers=("computable",)).computable
        assert not evaluate_spec(task, plain.spec_text, layers=("computable",)).computable


def _always(_sig):
    return True


def test_planners_own_lexicon_is_the_direct_one():
    # nlfp knows the six direct idioms (plus the Boolean wrapper) and nothing else: no precondition idiom
    smoke, _ = splits()
    own = set(DIRECT_LEXICON) | {"bool_iff"}
    for task in smoke.eval:
        plan = from_markdown(gen("nlfp", task).plan_text)
        assert {c.pattern for c in plan.assumptions + plan.guarantees} <= own, task.id
        assert plan.assumptions == ()
    text = prompt("nlfp", (smoke.eval[0].description, smoke.eval[0].signature))[-1].content
    assert "nonempty_pre" not in text and "max_characterisation" in text


def test_mined_pieces_fill_constants_and_combine():
    # two pieces of one idiom, mined from the same source sentences, with a -1 sentinel and a 0 constant
    src = "find the index of the first negative number in the array `a`"
    part1 = Pattern(
        "first_part1",
        ("index", src),
        "if result is `⟨c⟩`, no element of `⟨a⟩` satisfies `⟨p⟩`",
        "result = ⟨c⟩ → (∀ i, i < ⟨a⟩.size → ¬⟨p @ ⟨a⟩[i]!⟩)",
        _always,
    )
    part2 = Pattern(
        "first_part2",
        ("index", src),
        "if result differs from `⟨c⟩`, `⟨c2⟩` ≤ result and `⟨a⟩`[result]! satisfies `⟨p⟩`",
        "result ≠ ⟨c⟩ → ⟨c2⟩ ≤ result ∧ result < ⟨a⟩.size ∧ ⟨p @ ⟨a⟩[result.toNat]!⟩",
        _always,
    )
    sig = parse_signature("def firstBig (xs : Array Int) : Int")
    desc = "Find the index of the first entry of the array `xs` above 7. If none, return -1."
    assert fill_slots(part1, desc, sig, description=desc) == {"c": "-1", "a": "xs", "p": "x > 7"}
    assert fill_slots(part2, desc, sig, description=desc) == {"c": "-1", "c2": "0", "a": "xs", "p": "x > 7"}
    task = TaskView(desc, "def firstBig (xs : Array Int) : Int")
    reply = policy("specbridge").complete(prompt("specbridge", task, Context(hints=(part1, part2))))
    post = print_spec(parse_spec(extract_spec(reply.text))).split("Prop :=")[-1]
    assert "first_part1" in reply.text and "first_part2" in reply.text
    assert "result = -1 → (∀ i, i < xs.size → ¬xs[i]! > 7)" in post
    assert "result ≠ -1 → 0 ≤ result" in post
    # without the hints the planner has no idiom for a first index
    plain = policy("nlfp").complete(prompt("nlfp", task)).text
    assert "first_part" not in plain


def _leave_one_out(k):
    pool = splits()[1].pool
    return pool[k], pool[:k] + pool[k + 1 :]


def test_specbridge_shows_the_few_shot_exemplars_with_their_plans():
    task, rest = _leave_one_out(3)
    view = TaskView(task.description, task.signature)
    few = build_context("few_shot_cot", view, pool=rest)
    sb = build_context("specbridge", view, pool=rest, library=SEED_LIBRARY, retrieve=cue_retrieve)
    assert len(sb.exemplars) == 2
    assert [(e.description, e.spec) for e in sb.exemplars] == [(e.description, e.spec) for e in few.exemplars]
    user = prompt("specbridge", view, sb)[-1].content
    assert user.count("Plan:\n```markdown") == 2 and user.count("Specification:\n```lean") == 2
    for ex in sb.exemplars:
        assert from_markdown(ex.plan).guarantees  # a well-formed plan with at least one guarantee
        assert ex.plan.strip() in user
        assert user.index(ex.description) < user.index(ex.plan.strip()) < user.index(ex.spec.strip())
    assert "Plan:" not in prompt("few_shot_cot", view, few)[-1].content
    # the ablation shows every reconstructed clause, the others only the round-tripping ones
    nrt = build_context("no_round_trip", view, pool=rest, library=SEED_LIBRARY, retrieve=cue_retrieve)
    by_desc = {t.description: t for t in rest}
    for a, b in zip(sb.exemplars, nrt.exemplars, strict=True):
        assert a.plan == to_markdown(exemplar_plan(by_desc[a.description]))
        assert b.plan == to_markdown(exemplar_plan(by_desc[b.description], verified=False))


def test_exemplar_plans_keep_only_round_tripping_clauses():
    pool = splits()[1].pool
    checked = lossy = 0
    for t in pool[12:16]:
        ok = mining.clause_round_trips(t, mining.reconstruct(t))
        assert [c.id for c in exemplar_plan(t).clauses] == [cid for cid, good in ok if good]
        assert [c.id for c in exemplar_plan(t, verified=False).clauses] == [cid for cid, _ in ok]
        checked += 1
        lossy += not all(good for _, good in ok)
    assert checked == 4 and lossy >= 1  # the lossy verbaliser breaks at least one clause
    with pytest.raises(TypeError, match="task"):
        exemplar_plan(pool[0].id)
    with pytest.raises(TypeError, match="verified"):
        exemplar_plan(pool[0], verified="yes")


def test_specbridge_is_deterministic_and_never_sees_the_task_reference():
    for k in (9, 21):
        task, rest = _leave_one_out(k)
        wrong = dataclasses.replace(task, spec=render_spec(task.signature, "True", "False"))
        kw = {"pool": rest, "library": SEED_LIBRARY, "retrieve": cue_retrieve}
        a, b, c = (generate("specbridge", t, **kw) for t in (task, wrong, task))
        assert a.reply == b.reply == c.reply and a.messages == b.messages
        text = "\n".join(m.content for m in a.messages)
        assert task.postcondition.strip() not in text and task.description in text


def _exemplar(tid):
    t = next(x for x in splits()[1].pool if x.id == tid)
    return Exemplar(t.description, t.signature, t.spec, to_markdown(exemplar_plan(t)))


@pytest.mark.parametrize(
    ("source", "description", "signature", "pre", "post"),
    [
        (
            "hw-tail-sum",
            "Given a list `zs` and a position `j`, return the sum of the elements from position `j` to the "
            "end. A larger `j` than the length is not allowed.",
            "def tailTotal (zs : List Int) (j : Nat) : Int",
            "j ≤ zs.length",
            "result = (zs.drop j).sum",
        ),
        (
            "p19-038-map",
            "Write a function that triples every element of the integer array `ws` and returns the new "
            "array.",
            "def tripleAll (ws : Array Int) : Array Int",
            "True",
            "(∀ i, i < ws.size → result[i]! = 3 * ws[i]!) ∧ result.size = ws.size",
        ),
    ],
)
def test_a_transferred_clause_is_reinstantiated_for_the_new_task(source, description, signature, pre, post):
    ex = _exemplar(source)
    old_names = {p.name for p in parse_signature(ex.signature).params}
    view = TaskView(description, signature)
    reply = policy("specbridge").complete(prompt("specbridge", view, Context(exemplars=(ex,)))).text
    spec = parse_spec(extract_spec(reply))
    text = print_spec(spec)
    assert text.split("Prop :=")[1].split("def ")[0].strip() == pre
    assert text.split("Prop :=")[-1].strip() == post
    plan = from_markdown(reply[: reply.index("```lean")])
    assert all(c.pattern.startswith("example1_") for c in plan.clauses) and plan.guarantees
    assert all(f"{n}[" not in text and f"{n}." not in text for n in old_names - {"values"})
    # the planner's own lexicon has no such idiom
    plain = policy("nlfp").complete(prompt("nlfp", view)).text
    assert print_spec(parse_spec(extract_spec(plain))) != text


def test_endpoint_path_matches_the_offline_policy(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    smoke, _ = splits()
    task = smoke.eval[1]
    for m in ("few_shot_cot", "specbridge"):
        offline = policy(m)

        def answer(body, offline=offline):
            msgs = [Message(x["role"], x["content"]) for x in body["messages"]]
            return offline.complete(msgs, max_tokens=body.get("max_tokens", 4096)).text

        server = ChatServer(answer=answer)
        try:
            online = gen(m, task, backend=client(server))
        finally:
            server.close()
        assert online == gen(m, task)


def test_unparsable_replies_are_kept():
    smoke, _ = splits()
    task = smoke.eval[0]
    g = gen("direct", task, backend=Scripted(lambda msgs: "I cannot do that."))
    assert g.spec_text == "I cannot do that." and g.error is not None
    assert not evaluate_spec(task, g.spec_text, layers=("computable",)).parsed
    assert extract_spec("text\n```lean\ndef a\n```\n```lean\ndef b\n```") == "def b\n"


def test_spec_text_parses_with_the_task_signature():
    smoke, _ = splits()
    task = smoke.eval[2]
    spec = parse_spec(gen("nlfp", task).spec_text)
    assert spec.signature.name == task.name


def test_bad_inputs_are_named():
    smoke, _ = splits()
    task = smoke.eval[0]
    with pytest.raises(ValueError, match="method"):
        policy("oracle")
    with pytest.raises(ValueError, match="method"):
        gen("gpt", task)
    with pytest.raises(ValueError, match="method"):
        prompt("fewshot", (task.description, task.signature))
    with pytest.raises(TypeError, match="task"):
        gen("direct", task.id)
    with pytest.raises(TypeError, match="pool"):
        gen("few_shot", task, pool="tasks")
    with pytest.raises(TypeError, match="backend"):
        gen("direct", task, backend=object())
    with pytest.raises(TypeError, match="library"):
        gen("specbridge", task, library=["x"])
    with pytest.raises(TypeError, match="context"):
        prompt("direct", (task.description, task.signature), {"hints": ()})
    with pytest.raises(TypeError, match="prefer"):
        fill_slots(SEED_LIBRARY.get("count_matches"), "x", parse_signature(task.signature), prefer=["c"])
