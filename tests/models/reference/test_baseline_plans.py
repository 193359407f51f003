"""The baseline on plan tasks: objects of the nearest demonstration re-filled from the query."""

from __future__ import annotations

import asyncio

from toolbench.models.reference.baseline import BaselineModel
from toolbench.models.reference.plans import PlanPredictor, PlanVocab, parse_call, plan_predictor
from toolbench.types import Doc, GenerationRequest, Sample, TaskContext

_OBJ = "'object' can only be one of"
FUNCTIONS = [
    Doc("WalkTo", f"# walk; {_OBJ} ['kitchen', 'bedroom', 'fridge', 'food_apple', 'milk',"
        " 'kitchen_cabinet', 'closet', 'clothes_jacket', 'hat', 'dresser']\nAgent.WalkTo(object)"),
    Doc("Grab", f"# grab; {_OBJ} ['food_apple', 'milk', 'clothes_jacket', 'hat']\n"
        "Agent.Grab(object)"),
    Doc("Open", f"# open; {_OBJ} ['fridge', 'kitchen_cabinet', 'closet', 'dresser']\n"
        "Agent.Open(object)"),
    Doc("PutOn", f"# wear; {_OBJ} ['clothes_jacket', 'hat']\nAgent.PutOn(object)"),
    Doc("Put", "# put; 'object1' can only be one of ['food_apple', 'milk', 'hat'] and "
        "'object2' one of ['fridge', 'kitchen_cabinet', 'closet', 'dresser']\n"
        "Agent.Put(object1, object2)"),
]  # fmt: skip
EXAMPLES = [
    Doc("0", "Task: Put the apple away in the fridge\nAction:\nAgent.WalkTo(kitchen)\n"
        "Agent.Grab(food_apple)\nAgent.Open(fridge)\nAgent.Put(food_apple, fridge)"),
    Doc("1", "Task: Get the jacket out of the closet and wear it\nAction:\nAgent.WalkTo(bedroom)\n"
        "Agent.Open(closet)\nAgent.Grab(clothes_jacket)\nAgent.PutOn(clothes_jacket)"),
]  # fmt: skip


def _predictor() -> PlanPredictor:
    predictor = plan_predictor(EXAMPLES, FUNCTIONS)
    assert predictor is not None
    return predictor


def test_vocabulary_from_docs_names_objects_by_their_words() -> None:
    vocab = PlanVocab.from_docs(FUNCTIONS)
    assert vocab is not None
    assert vocab.places == {"kitchen", "bedroom"}
    assert vocab.allowed[("Agent.Put", 1)] >= {"fridge", "closet"}
    # whole names, a unique last word ("apple"), plurals; longest phrase wins
    assert vocab.mentions("Put the apples in the kitchen cabinet") == [
        "food_apple",
        "kitchen_cabinet",
    ]
    assert vocab.mentions("Wear the jacket, then the hat") == ["clothes_jacket", "hat"]
    assert parse_call("Agent.Put(a, b)") == ("Agent.Put", ["a", "b"])
    assert parse_call('API.set("x")') is None


def test_objects_are_swapped_and_actions_kept() -> None:
    plan = _predictor().predict("Put the milk away in the kitchen cabinet")
    assert plan.split("\n") == [
        "Agent.WalkTo(kitchen)", "Agent.Grab(milk)", "Agent.Open(kitchen_cabinet)",
        "Agent.Put(milk, kitchen_cabinet)",
    ]  # fmt: skip


def test_swap_respects_what_the_actions_allow_and_fixes_the_walk() -> None:
    # The dresser is named first, but it cannot be grabbed or worn: query order alone would
    # swap it for the jacket. No demonstration placed a dresser, so the walk goes to it.
    plan = _predictor().predict("From the dresser, get the hat out and wear it")
    assert plan.split("\n") == [
        "Agent.WalkTo(dresser)", "Agent.Open(dresser)", "Agent.Grab(hat)", "Agent.PutOn(hat)",
    ]  # fmt: skip
    # A fridge was used after walking to the kitchen: that is where a walk to it goes.
    lines = _predictor().refill(
        ["Agent.WalkTo(bedroom)", "Agent.Open(closet)"], {"closet": "fridge"}, ["fridge"]
    )
    assert lines == ["Agent.WalkTo(kitchen)", "Agent.Open(fridge)"]


def test_unknown_place_walks_to_the_object_itself() -> None:
    # milk was never used after a walk in the demonstrations: walk to it instead.
    predictor = _predictor()
    lines = predictor.refill(
        ["Agent.WalkTo(bedroom)", "Agent.Grab(food_apple)"], {"food_apple": "milk"}, ["milk"]
    )
    assert lines == ["Agent.WalkTo(milk)", "Agent.Grab(milk)"]


def test_programs_with_literals_keep_the_literal_baseline() -> None:
    examples = [Doc("0", 'Task: Homes in Denver\nAction:\nAPI.set_location("Denver")')]
    assert plan_predictor(examples, FUNCTIONS) is None
    assert plan_predictor(EXAMPLES, [Doc("x", "# no lists\nAgent.Grab(object)")]) is None


def test_baseline_model_uses_the_plan_predictor() -> None:
    sample = Sample(id="0", task="t", query="Put the milk away in the kitchen cabinet", labels=())
    request = GenerationRequest(
        prompt="x", sample=sample, context=TaskContext(tuple(FUNCTIONS), tuple(EXAMPLES))
    )
    text = asyncio.run(BaselineModel().generate(request)).text
    assert "Agent.Put(milk, kitchen_cabinet)" in text


def test_v0_baseline_refills() -> None:
    """On the shipped data the re-filled plans are not the demonstrations' plans."""
    from toolbench.tasks.virtual_home import TASK

    data = TASK.load("v0", None)
    predictor = plan_predictor(data.context.examples, data.context.functions)
    assert predictor is not None
    demo_plans = {"\n".join(d.plan) for d in predictor.demos}
    plans = [predictor.predict(s.query) for s in data.samples[:40]]
    assert sum(p not in demo_plans for p in plans) >= 20
