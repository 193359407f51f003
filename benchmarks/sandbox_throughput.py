"""Sandbox throughput: executions per second for home_search- and booking-style programs.

Run as ``python benchmarks/sandbox_throughput.py``. Programs are generated (seeded) in the
shape of ToolBench gold programs but with random values and setter orders, so nearly every one
is unique, as model predictions are. For each style it reports:

* in-process: the worker's per-program work (compile via the same caches, fresh world, exec,
  snapshot, JSON) done serially in this process, with no isolation: the floor for overhead
  (plus the same without the code cache, to show what compiling costs);
* pool.run from 8 threads and pool.arun from asyncio (64 in flight), at 1 and 2 workers,
  with the overhead ratio against the in-process rate.

Keeps to ~30 s: every measurement stops after ``SECONDS`` or ``COUNT`` programs.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolbench.sandbox import SandboxPool, World, policy
from toolbench.sandbox.codecache import CodeCache, compile_program
from toolbench.tasks.booking.world import make_world as booking_world
from toolbench.tasks.home_search.world import make_world as home_world

SECONDS = 2.0
COUNT = 8000
THREADS = 8
IN_FLIGHT = 64
CITIES = (
    *("Austin", "Boise", "Denver", "Fresno", "Miami", "Omaha", "Reno", "Tacoma", "Tempe"),
    *("Tulsa", "Wichita", "Yonkers", "Akron", "Boston", "Chicago", "Dallas", "Eugene"),
    *("El Paso", "Little Rock", "San Jose", "St. Louis", "Cape Coral", "New York"),
)


def home_program(rng: random.Random) -> str:
    mode = rng.choice(["buy", "rent"])
    types = ["House", "Condo", "Townhouse"] + (["Land", "Co-op"] if mode == "buy" else [])
    setters = [
        f"API.select_home_type({rng.sample(types, rng.randint(1, 3))!r})",
        f"API.set_min_price({rng.randrange(1000, 500000, 1000)})",
        f"API.set_max_price({rng.randrange(500000, 2000000, 1000)})",
        f"API.set_num_beds({rng.randint(1, 6)})",
        f"API.set_num_baths({rng.randint(1, 4) + rng.choice([0, 0.5])})",
        f"API.set_min_square_feet({rng.randrange(500, 3000, 50)})",
        f"API.set_num_garages({rng.randint(1, 3)})",
        f"API.set_floor_number({rng.randint(1, 30)})",
        f"API.set_max_commute_time({rng.randint(10, 90)})",
    ]
    body = rng.sample(setters, rng.randint(2, 6))
    lines = [f'API.set_location("{rng.choice(CITIES)}")', f'API.set_buy_or_rent("{mode}")']
    return "\n".join([*lines, *body, "API.search()"])


def booking_program(rng: random.Random) -> str:
    def date() -> str:
        return f"Date({rng.randint(1, 12)}, {rng.randint(1, 28)}, {rng.choice([2023, 2024])})"

    kind = rng.choice(["trip tickets", "hotels", "both"])
    lines = [f'API.select_booking_type("{kind}")']
    if kind != "hotels":
        lines += [
            f'API.select_transportation("{rng.choice(["flight", "train", "bus", "cruise"])}")',
            f'location_from = Loc("{rng.choice(CITIES)}")',
            "API.set_origin(location_from)",
            f'location_to = Loc("{rng.choice(CITIES)}")',
            "API.set_destination(location_to)",
            f"departure_date = {date()}",
            "API.set_departure_date(departure_date)",
            f"API.set_num_adults({rng.randint(1, 5)})",
        ]
    if kind != "trip tickets":
        lines += [
            f'location = Loc("{rng.choice(CITIES)}")',
            "API.set_hotel_location(location)",
            f"API.set_checkin_date({date()})",
            f"API.set_checkout_date({date()})",
            f"API.set_num_rooms({rng.randint(1, 4)})",
            f'API.select_room_type("{rng.choice(["King Bed", "Queen Bed", "Luxury"])}")',
        ]
    return "\n".join([*lines, "API.search()"])


def in_process(factory: Callable[[], World], programs: list[str], cached: bool = True) -> float:
    """Executions/s doing the worker's per-program work here, without a process boundary.

    ``cached=False`` compiles every program with RestrictedPython, as if there were no cache.
    """
    cache = CodeCache()
    done, start = 0, time.perf_counter()
    for program in programs:
        world = factory()
        if cached:
            codes, error = cache.get(program)
        else:
            code, error = compile_program(program)
            codes = (code,) if code is not None else None
        assert codes is not None, error
        output = policy.OutputBuffer(65536)
        scope = policy.make_globals(world.namespace, world.allowed_modules, output)
        for code in codes:
            exec(code, scope)
        json.dumps(world.snapshot())
        done += 1
        if time.perf_counter() - start > SECONDS:
            break
    return done / (time.perf_counter() - start)


def with_threads(pool: SandboxPool, factory: Callable[[], World], programs: list[str]) -> float:
    stop = time.perf_counter() + SECONDS
    counts = [0] * THREADS

    def work(k: int) -> None:
        for program in programs[k::THREADS]:
            result = pool.run(factory, program)
            assert result.ok, result
            counts[k] += 1
            if time.perf_counter() > stop:
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.perf_counter() - start)


def with_asyncio(pool: SandboxPool, factory: Callable[[], World], programs: list[str]) -> float:
    async def main() -> float:
        stop = time.perf_counter() + SECONDS
        queue = iter(programs)
        done = 0

        async def client() -> None:
            nonlocal done
            for program in queue:
                result = await pool.arun(factory, program)
                assert result.ok, result
                done += 1
                if time.perf_counter() > stop:
                    return

        start = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(IN_FLIGHT)))
        return done / (time.perf_counter() - start)

    return asyncio.run(main())


def main() -> None:
    rng = random.Random(1234)
    styles = {
        "home_search": (home_world, [home_program(rng) for _ in range(COUNT)]),
        "booking": (booking_world, [booking_program(rng) for _ in range(COUNT)]),
    }
    print(f"CPUs: {os.cpu_count()}; programs unique per style: ", end="")
    print(", ".join(f"{name} {len(set(p))}/{len(p)}" for name, (_, p) in styles.items()))
    print(f"{'style':12} {'mode':26} {'workers':>7} {'exec/s':>9} {'overhead':>9}")
    for name, (factory, programs) in styles.items():
        uncached = in_process(factory, programs, cached=False)
        print(f"{name:12} {'in-process, no code cache':26} {'-':>7} {uncached:9.0f}")
        base = in_process(factory, programs)
        print(f"{name:12} {'in-process, no isolation':26} {'-':>7} {base:9.0f} {'1.0x':>9}")
        for workers in (1, 2):
            with SandboxPool(workers=workers) as pool:
                for program in programs[:200]:  # start workers, import the simulator
                    pool.run(factory, program)
                for mode, measure in (
                    (f"run, {THREADS} threads", with_threads),
                    (f"arun, {IN_FLIGHT} in flight", with_asyncio),
                ):
                    rate = measure(pool, factory, programs[200:])
                    ratio = f"{base / rate:.1f}x"
                    print(f"{name:12} {mode:26} {workers:>7} {rate:9.0f} {ratio:>9}")


if __name__ == "__main__":
    main()
