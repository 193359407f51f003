"""``toolbench.envs.WebShopEnv``: gymnasium's checker passes, the expert reaches reward 1 with
the pages the task shows a model, the 25-turn cap truncates, hostile actions are no-ops, and
a missing gymnasium is a clear ImportError."""

from __future__ import annotations

import sys
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import toolbench.envs
from toolbench.envs import ENV_ID
from toolbench.envs.web_shop import WebShopEnv
from toolbench.tasks.web_shop.expert import ideal_action


@pytest.fixture(scope="module")
def env() -> WebShopEnv:
    return WebShopEnv()


def test_gymnasium_checker_passes_without_warnings() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rendering = gymnasium.make(ENV_ID, goals=[0, 1, 2], render_mode="ansi")
        check_env(rendering.unwrapped, skip_render_check=False)
        check_env(gymnasium.make(ENV_ID, version="v1").unwrapped)
    assert [str(w.message) for w in caught if "gymnasium" in str(w.filename)] == []
    by_module = gymnasium.make("toolbench.envs:toolbench/WebShop-v0")
    assert isinstance(by_module.unwrapped, WebShopEnv)


@pytest.mark.parametrize("goal", [0, 11, 250])
def test_expert_episode_reaches_reward_1(env: WebShopEnv, goal: int) -> None:
    observation, info = env.reset(options={"goal": goal})
    mirror = env.store.new_session(goal)  # the task's session, stepped alongside
    assert observation == mirror.observation and info["goal"] == goal and info["turns"] == 0
    rewards, terminated, truncated = [], False, False
    while not (terminated or truncated):
        action = ideal_action(mirror)
        expected = mirror.step(action)
        observation, reward, terminated, truncated, info = env.step(action)
        assert observation == expected.observation and info["valid"]
        assert env.observation_space.contains(observation)
        rewards.append(reward)
    assert terminated and not truncated and rewards[-1] == 1.0 and set(rewards[:-1]) <= {0.0}
    assert info["reward_parts"]["reward"] == 1.0 and info["page"] == "done"
    with pytest.raises(RuntimeError, match="reset"):
        env.step("click[buy now]")


def test_truncated_after_25_turns_and_hostile_actions_are_no_ops(env: WebShopEnv) -> None:
    env.reset(options={"goal": 4})
    hostile = ["x" * 1_000_000, "click[a]\nclick[b]", "search[]", "\U0001f600[\u202e]", "["]
    for turn in range(1, 26):
        observation, reward, terminated, truncated, info = env.step(hostile[turn % len(hostile)])
        assert info["valid"] is False and info["turns"] == turn and reward == 0.0
        assert not terminated and truncated is (turn == 25)
        assert env.observation_space.contains(observation)
    with pytest.raises(RuntimeError):
        env.step("search[socks]")


def test_reset_seeds_and_goal_checks(env: WebShopEnv) -> None:
    first = [env.reset(seed=7)[1]["goal"], env.reset()[1]["goal"]]
    second = [env.reset(seed=7)[1]["goal"], env.reset()[1]["goal"]]
    assert first == second and all(g in env.goal_ids for g in first)
    for bad in (-1, 10**9, "3", True):
        with pytest.raises(ValueError, match="goal"):
            env.reset(options={"goal": bad})
    with pytest.raises(ValueError, match="version"):
        WebShopEnv(version="v9")
    sample = env.action_space.sample()
    assert isinstance(sample, str) and len(sample) <= env.action_space.max_length


def test_missing_gymnasium_is_a_clear_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"pip install 'toolbench\[envs\]'"):
        toolbench.envs.register()
    with pytest.raises(ImportError, match=r"toolbench\.envs needs gymnasium"):
        _ = toolbench.envs.WebShopEnv
