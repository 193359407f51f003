"""mytask: say whether a number is even or odd; mymodel: a backend that knows."""

from toolbench import core

NUMBERS = {"a": 4, "b": 7, "c": 10}


class MyTask(core.TaskBase):
    name = "mytask"
    summary = "even or odd? (one word)"
    metrics = ("success_rate", "even_rate")  # even_rate: this task's own metric
    defaults = core.TaskDefaults(max_tokens=4)

    def load(self, version, data_dir, live=None):
        samples = [
            core.Sample(key, self.name, f"Is {n} even or odd?", labels=(("even", "odd")[n % 2],))
            for key, n in NUMBERS.items()
        ]
        return core.TaskData(self.name, version, samples, core.TaskContext((), ()), __name__, "v0")

    def first_request(self, data, sample, epoch, prompter):
        return core.GenerationRequest(prompt=f"{sample.query}\nAnswer: ", max_tokens=4)

    async def solve(self, state, generate, resources):
        request = self.first_request(resources.data, state.sample, state.epoch, None)
        state.prediction = (await generate(request)).text.strip().lower()
        right = state.prediction == state.sample.labels[0]
        even = 1.0 if state.prediction == "even" else 0.0
        return core.Outcome(core.Status.SCORED, right, {"even_rate": even})


TASK = MyTask()


class MyModel:
    """knows parity: reads the number in the prompt"""

    cacheable = True  # the response cache keeps its answers (by model name and request)

    def __init__(self, argument, options):
        self.name = f"mymodel:{argument}"

    async def generate(self, request):
        number = int(request.prompt.split()[1])
        return core.Generation(text="odd" if number % 2 else "even", finish_reason="stop")

    async def aclose(self):
        return None
