"""Hand-written implicit-mode replies and the bucket each must land in.

Written for these tests in the voices models really use: terse API-Bank lines, chatty GPT
answers, Llama-style prose with a call in it, ReAct traces, Hermes tags, native tool calls, and
the ways each of them goes wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OFFERED = ("GetWeather", "BookFlight", "QueryStock")
#: The implicit prompt's format line, as SmolLM2-135M-Instruct copied it into its replies.
FORMAT_LINE = "API-Request: [ApiName(key1='value1', key2='value2')]"


def native(name: str | None, arguments: str) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {"id": "call_1", "type": "function", "function": function}


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    bucket: str
    api: str | None = None
    offered: bool | None = None
    arguments: dict[str, Any] | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    apis: tuple[str, ...] = OFFERED
    notes: str = field(default="", compare=False)


CALLS = [
    Case(
        "apibank-line",
        "API-Request: [GetWeather(city='Paris', date='2024-05-01')]",
        "call",
        "GetWeather",
        True,
        {"city": "Paris", "date": "2024-05-01"},
    ),
    Case("apibank-no-arguments", "API-Request: [GetWeather()]", "call", "GetWeather", True, {}),
    Case(
        "bracketed-without-prefix",
        'Booking now: [BookFlight(origin="JFK", destination="LHR", seats=2)]',
        "call",
        "BookFlight",
        True,
        {"origin": "JFK", "destination": "LHR", "seats": 2},
    ),
    Case(
        "llama-prose-call",
        'Sure, let me check that for you. GetWeather(city="Tokyo", unit="celsius")',
        "call",
        "GetWeather",
        True,
    ),
    Case(
        "fenced-python-with-prefix",
        "Here's the call:\n```python\napi.QueryStock(symbol='AAPL')\n```",
        "call",
        "QueryStock",
        True,
        {"symbol": "AAPL"},
    ),
    Case(
        "json-name-arguments",
        '{"name": "GetWeather", "arguments": {"city": "Berlin"}}',
        "call",
        "GetWeather",
        True,
        {"city": "Berlin"},
    ),
    Case(
        "fenced-json-then-closing-question",
        'I\'ll look that up.\n```json\n{"api": "QueryStock", "parameters": {"symbol": "TSLA"}}\n'
        "```\nAnything else you'd like to know?",
        "call",
        "QueryStock",
        True,
    ),
    Case(
        "json-tool-input",
        '{"tool": "GetWeather", "tool_input": {"city": "Rome"}}',
        "call",
        "GetWeather",
        True,
    ),
    Case(
        "openai-ish-wrapper",
        '{"type": "function", "function": {"name": "BookFlight", '
        '"arguments": "{\\"origin\\": \\"SFO\\", \\"destination\\": \\"SEA\\"}"}}',
        "call",
        "BookFlight",
        True,
        {"origin": "SFO", "destination": "SEA"},
    ),
    Case(
        "react",
        'Thought: The user wants the weather in Oslo.\nAction: GetWeather\nAction Input: {"city": '
        '"Oslo"}\nObservation:',
        "call",
        "GetWeather",
        True,
        {"city": "Oslo"},
    ),
    Case(
        "hermes-tag",
        '<tool_call>\n{"name": "QueryStock", "arguments": {"symbol": "NVDA"}}\n</tool_call>',
        "call",
        "QueryStock",
        True,
    ),
    Case(
        "call-then-question",
        "API-Request: [GetWeather(city='Paris')]\nWhich day should I check after that?",
        "call",
        "GetWeather",
        True,
    ),
    Case(
        "native-only",
        "",
        "call",
        "GetWeather",
        True,
        {"city": "Lima"},
        tool_calls=(native("GetWeather", '{"city": "Lima"}'),),
    ),
    Case(
        "native-with-text",
        "Let me check the stock price for you.",
        "call",
        "QueryStock",
        True,
        tool_calls=(native("QueryStock", '{"symbol": "IBM"}'),),
    ),
    Case(
        "native-sanitised-name",
        "",
        "call",
        "weather.get",
        True,
        tool_calls=(native("weather_get", "{}"),),
        apis=("weather.get",),
    ),
    Case(
        "mistral-tool-calls",
        '[TOOL_CALLS] [{"name": "GetWeather", "arguments": {"city": "Lima"}}]',
        "call",
        "GetWeather",
        True,
    ),
    Case(
        "positional-argument",
        "GetWeather('Madrid')",
        "call",
        "GetWeather",
        True,
        {"arg0": "Madrid"},
    ),
    Case(
        "json-words-in-call",
        "API-Request: [BookFlight(origin='JFK', destination='CDG', refundable=true)]",
        "call",
        "BookFlight",
        True,
        {"origin": "JFK", "destination": "CDG", "refundable": True},
    ),
    Case(
        "functions-prefix",
        '{"name": "functions.GetWeather", "arguments": {}}',
        "call",
        "GetWeather",
        True,
    ),
    Case(
        "python-dict-quotes",
        "{'name': 'QueryStock', 'arguments': {'symbol': 'MSFT'}}",
        "call",
        "QueryStock",
        True,
    ),
    Case(
        "two-calls-in-one-request",
        "API-Request: [GetWeather(city='Paris'), QueryStock(symbol='AIR.PA')]",
        "call",
        "GetWeather",
        True,
    ),
    Case(
        "smollm-format-line-then-call",
        f"{FORMAT_LINE}\nAPI-Request: [GetWeather(city='Paris', date='2024-05-01')]",
        "call",
        "GetWeather",
        True,
        {"city": "Paris", "date": "2024-05-01"},
        notes="the copied format line is no call; the real call after it is",
    ),
    Case(
        "format-line-copy-inside-the-call-list",
        "API-Request: [ApiName(key1='value1', key2='value2'), BookFlight(origin='OSL')]",
        "call",
        "BookFlight",
        True,
        {"origin": "OSL"},
    ),
    Case(
        "real-call-then-format-line",
        f"API-Request: [QueryStock(symbol='AAPL')]\n{FORMAT_LINE}",
        "call",
        "QueryStock",
        True,
    ),
    Case(
        "not-offered-then-offered",
        "API-Request: [ToolSearcher(keywords='weather')]\nAPI-Request: [GetWeather(city='Oslo')]",
        "call",
        "GetWeather",
        True,
        notes="a call of an offered API anywhere wins over a call of one that was not offered",
    ),
    Case(
        "not-offered-first-in-the-list",
        "API-Request: [SendEmail(to='bob@example.com'), QueryStock(symbol='IBM')]",
        "call",
        "QueryStock",
        True,
        {"symbol": "IBM"},
    ),
    Case(
        "pythonic-list-reply",
        "<|python_start|>[search_web(q='x'), BookFlight(origin='OSL')]<|python_end|>",
        "call",
        "BookFlight",
        True,
        {"origin": "OSL"},
    ),
    Case(
        "fixed-after-a-broken-try",
        "API-Request: [GetWeather(city='Paris'\nSorry, let me fix that:\n"
        "API-Request: [GetWeather(city='Paris')]",
        "call",
        "GetWeather",
        True,
        notes="a well-formed call anywhere wins over a malformed one",
    ),
]

ASKS = [
    Case("which-city", "Could you tell me which city you'd like the weather for?", "ask"),
    Case("what-date", "What date would you like to fly?", "ask"),
    Case(
        "two-questions",
        "Sure — I can book that flight. Which airport will you be departing from, and on what "
        "date?",
        "ask",
    ),
    Case("please-provide", "Please provide the stock ticker symbol you're interested in.", "ask"),
    Case(
        "need-then-let-me-know",
        "To check the weather I need the city name. Let me know the city and I'll look it up.",
        "ask",
    ),
    Case(
        "mentions-api-and-waits",
        "I can use GetWeather once you tell me the city.",
        "ask",
        notes="an API named in prose without call syntax is not a call",
    ),
    Case(
        "cannot-yet-need-date",
        "I can't call the API yet because I need the date — what date?",
        "ask",
        notes="inability blamed on missing information plus a question is ask",
    ),
    Case("disambiguation", "Which one do you mean: Paris, France or Paris, Texas?", "ask"),
    Case("spanish", "¿Para qué ciudad quieres el pronóstico del tiempo?", "ask"),
    Case("german", "Könnten Sie mir bitte das Reisedatum nennen?", "ask"),
    Case(
        "confirm-departure",
        "I'd be happy to help! Before I look up the flight, could you confirm the departure city?",
        "ask",
    ),
    Case(
        "ellipsis-mention",
        "Sure, I'll check the weather with GetWeather(...) after you tell me the city.",
        "ask",
        notes="Name(...) in prose names the API; it is no call attempt",
    ),
    Case(
        "angle-placeholder-mention",
        "I'll run GetWeather(city=<city>) as soon as you give me the city.",
        "ask",
    ),
    Case(
        "gpt-list-of-details",
        "Happy to help with that! To book your flight, I need a couple of details:\n"
        "1. Departure city\n2. Destination\n3. Travel date\n"
        "Once you share these, I'll take care of the booking.",
        "ask",
    ),
    Case("unit-choice", "Do you want the temperature in Celsius or Fahrenheit?", "ask"),
    Case(
        "need-the-following",
        "To proceed, I'd need the following: departure date and number of passengers.",
        "ask",
    ),
    Case("not-sure-which", "I'm not sure which Springfield you mean.", "ask"),
    Case(
        "question-beside-format-line",
        f"Which city do you want the weather for?\n{FORMAT_LINE}",
        "ask",
        notes="the copied format line is left out; the rest of the reply decides",
    ),
    Case(
        "cannot-proceed-until",
        "I cannot proceed with the available tools until you provide the travel date.",
        "ask",
        notes="the inability blames missing information, so it is not a cannot cue",
    ),
]

CANNOTS = [
    Case(
        "baseline-sentence",
        "I cannot do that: none of the available APIs fits this request.",
        "cannot",
    ),
    Case(
        "none-can-translate",
        "Unfortunately, none of the available APIs can translate text.",
        "cannot",
    ),
    Case(
        "no-access-to-tool",
        "I'm sorry, but I don't have access to a tool that can send emails.",
        "cannot",
    ),
    Case(
        "no-suitable-api",
        "There is no suitable API in the provided list for booking hotels.",
        "cannot",
    ),
    Case(
        "cannot-with-provided-tools",
        "I cannot complete this request with the provided tools, since they only cover weather "
        "and stocks.",
        "cannot",
    ),
    Case("not-supported", "Booking a restaurant is not supported by the available APIs.", "cannot"),
    Case(
        "tools-i-have-dont-support",
        "The tools I have don't support currency conversion, so I can't do that for you.",
        "cannot",
    ),
    Case(
        "cannot-then-offer",
        "None of these tools can order food. Would you like me to check the weather instead?",
        "cannot",
    ),
    Case(
        "cannot-then-info-question",
        "I don't have a tool for hotel bookings. Which city are you travelling to? I could at "
        "least check the weather there.",
        "cannot",
        notes="an explicit toolset judgement wins over a following question (rule 5)",
    ),
    Case("generic-refusal", "I'm sorry, I can't help with that.", "cannot"),
    Case(
        "toolbench-give-up",
        'Thought: Nothing here can do this.\nAction: Finish\nAction Input: {"return_type": '
        '"give_up_and_restart"}',
        "cannot",
    ),
    Case(
        "spanish",
        "Lo siento, ninguna de las herramientas disponibles permite reservar hoteles.",
        "cannot",
    ),
    Case("outside-scope", "That request is outside the scope of the available APIs.", "cannot"),
    Case(
        "beyond-capabilities",
        "Unfortunately, this is beyond my capabilities with the current toolset.",
        "cannot",
    ),
    Case(
        "cannot-then-if-you-want",
        "None of the available APIs can book hotels, but if you want I can check the weather.",
        "cannot",
    ),
    Case("none-of-them-suitable", "None of them are suitable for booking a hotel.", "cannot"),
    Case(
        "quotes-the-format-then-cannot",
        f"I would call an API as {FORMAT_LINE}, but none of the available APIs can book hotels.",
        "cannot",
    ),
    Case(
        "api-for-is-not-available",
        "An API for checking train schedules is not available here, sorry.",
        "cannot",
    ),
]

ANSWERS = [
    Case("fact", "The capital of Australia is Canberra.", "answer"),
    Case("thanks", "You're welcome! Have a great trip.", "answer"),
    Case(
        "result-then-closing",
        "It's currently 18°C and sunny in Paris. Is there anything else I can help with?",
        "answer",
    ),
    Case(
        "let-me-know-if",
        "Based on the API result, your flight BA117 departs at 9:40 from Terminal 5. Let me know "
        "if you need anything else!",
        "answer",
    ),
    Case(
        "api-mentioned-in-prose",
        "I can use GetWeather to look up forecasts for any city.",
        "answer",
    ),
    Case(
        "parentheses-in-prose",
        "You could use a map (like Google Maps) to find the quickest route.",
        "answer",
    ),
    Case(
        "offer-is-not-ask",
        "Great, your booking is confirmed. Would you like me to add it to your calendar?",
        "answer",
    ),
    Case("json-data", 'Here is your profile: {"name": "Alice", "age": 31}', "answer"),
    Case(
        "toolbench-finish-answer",
        'Action: Finish\nAction Input: {"return_type": "give_answer", "final_answer": "It is '
        'sunny in Rome."}',
        "answer",
    ),
    Case(
        "schema-echo",
        'GetWeather is described as {"name": "GetWeather", "description": "Current weather", '
        '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}',
        "answer",
    ),
    Case(
        "code-answer",
        "```python\nprint(sum(range(10)))\n```\nThat prints 45.",
        "answer",
    ),
    Case(
        "function-definition",
        "A stub would look like this:\n```python\ndef GetWeather(city):\n    return None\n```",
        "answer",
    ),
    Case(
        "hallucinated-user-turn",
        "The forecast says rain all day.\nUser: What about tomorrow?\n"
        "AI: API-Request: [GetWeather(city='Paris', day='tomorrow')]",
        "answer",
        notes="the reply ends where the model starts writing the user's turn",
    ),
    Case("parenthesised-aside", "Noted (see above).", "answer"),
    Case(
        "unoffered-call-shape-in-prose",
        "You could try [send_email(to='bob')] in another assistant.",
        "answer",
        notes="a pythonic call of a name not offered is only read when it is the whole reply",
    ),
    Case("hope-this-helps", "Paris will be around 20 degrees tomorrow. Hope this helps!", "answer"),
    Case("terse-ack", "Noted: your meeting is at 3pm.", "answer"),
    Case("no-tool-needed", "No tool call is needed here: 12 x 12 is 144.", "answer"),
    Case(
        "word-named-api-in-prose",
        "The calculator(s) on your phone will do: 15% of 80 is 12.",
        "answer",
        apis=("calculator", "search"),
        notes="plain words in parentheses after an API named like an English word are prose",
    ),
]

UNPARSEABLE = [
    Case("empty", "", "unparseable"),
    Case("whitespace", "   \n\t ", "unparseable"),
    Case("unbalanced", "API-Request: [GetWeather(city='Paris'", "unparseable"),
    Case("non-literal-argument", "API-Request: [GetWeather(city=get_city())]", "unparseable"),
    Case("no-name", "API-Request: [(city='Paris')]", "unparseable"),
    Case("empty-request", "API-Request: []", "unparseable"),
    Case("request-without-call", "API-Request:", "unparseable"),
    Case(
        "broken-json-arguments",
        '{"name": "GetWeather", "arguments": "{city: Paris}"}',
        "unparseable",
    ),
    Case(
        "json-missing-brace",
        'Calling it now: {"name": "GetWeather", "arguments": {"city": "Paris"}',
        "unparseable",
    ),
    Case(
        "tag-with-broken-json",
        '<tool_call>{"name": "QueryStock", "arguments": {"symbol": "AAPL"</tool_call>',
        "unparseable",
    ),
    Case(
        "tag-without-name",
        '<tool_call>{"arguments": {"symbol": "AAPL"}}</tool_call>',
        "unparseable",
    ),
    Case("react-input-not-json", "Action: GetWeather\nAction Input: city=Paris", "unparseable"),
    Case("react-without-input", "Thought: easy.\nAction: GetWeather", "unparseable"),
    Case("react-without-name", 'Action:\nAction Input: {"city": "Paris"}', "unparseable"),
    Case(
        "native-broken-arguments",
        "",
        "unparseable",
        tool_calls=(native("GetWeather", '{"city": '),),
    ),
    Case("native-without-name", "Sure.", "unparseable", tool_calls=(native(None, "{}"),)),
    Case(
        "malformed-call-and-question",
        "API-Request: [BookFlight(origin='JFK', date=)]\nCould you confirm the date?",
        "unparseable",
        notes="a malformed call never counts as abstention, whatever else the reply says",
    ),
    Case("bare-word-argument", "GetWeather(city=Paris)", "unparseable"),
    Case("prose-call-unbalanced", "Let me check: GetWeather(city='Paris'", "unparseable"),
    Case("explicit-placeholder", "API-Request: [GetWeather(city=...)]", "unparseable"),
    Case("only-a-user-turn", "User: what's the weather like?", "unparseable"),
    Case(
        "smollm-format-line-alone",
        FORMAT_LINE,
        "unparseable",
        notes="10 of 24 SmolLM2-135M replies were this line; it names no API and gives no value",
    ),
    Case("smollm-format-line-twice", f"{FORMAT_LINE}\n\n{FORMAT_LINE}\n", "unparseable"),
    Case("format-line-without-arguments", "API-Request: [ApiName()]", "unparseable"),
    Case(
        "format-line-as-json",
        '{"name": "ApiName", "arguments": {"key1": "value1", "key2": "value2"}}',
        "unparseable",
    ),
    Case(
        "format-name-with-values",
        "API-Request: [ApiName(city='Paris')]",
        "unparseable",
        "ApiName",
        False,
        {"city": "Paris"},
        notes="values of its own make it a committed call of an API that was not offered",
    ),
    Case(
        "format-values-for-an-offered-api",
        "API-Request: [GetWeather(key1='value1', key2='value2')]",
        "unparseable",
        notes="the placeholder's values are placeholders, like city=<city>",
    ),
    Case(
        "not-offered-apibank",
        "API-Request: [ToolSearcher(keywords='currency conversion')]",
        "unparseable",
        "ToolSearcher",
        False,
        {"keywords": "currency conversion"},
    ),
    Case(
        "not-offered-json",
        'Converting now.\n{"name": "ConvertCurrency", "arguments": {"amount": 100, "to": "EUR"}}',
        "unparseable",
        "ConvertCurrency",
        False,
    ),
    Case(
        "not-offered-react",
        'Action: search_web\nAction Input: {"query": "weather Paris"}',
        "unparseable",
        "search_web",
        False,
    ),
    Case(
        "not-offered-hermes-tag",
        '<tool_call>{"name": "SearchHotels", "arguments": {"city": "Rome"}}</tool_call>',
        "unparseable",
        "SearchHotels",
        False,
    ),
    Case(
        "not-offered-then-question",
        "API-Request: [SendEmail(to='bob@example.com')]\nShould I also check the weather?",
        "unparseable",
        "SendEmail",
        False,
    ),
    Case(
        "not-offered-pythonic-reply",
        "[send_email(to='bob@example.com', subject='Hi')]",
        "unparseable",
        "send_email",
        False,
        {"to": "bob@example.com", "subject": "Hi"},
        notes="Llama 3.2's format, left in the text by a tools-mode parser that knows no such tool",
    ),
    Case("not-offered-bare-call", "  SendEmail(to='bob')\n", "unparseable", "SendEmail", False),
    Case(
        "native-not-offered",
        "",
        "unparseable",
        "SendEmail",
        False,
        {"to": "bob@example.com"},
        tool_calls=(native("SendEmail", '{"to": "bob@example.com"}'),),
    ),
    Case(
        "native-not-offered-beside-cannot",
        "None of the available APIs can send emails.",
        "unparseable",
        "SendEmail",
        False,
        tool_calls=(native("SendEmail", "{}"),),
        notes="the model said the tools fall short, then called one it does not have",
    ),
    Case(
        "word-named-api-botched",
        "calculator(15% of 80)",
        "unparseable",
        apis=("calculator",),
    ),
]

CASES = CALLS + ASKS + CANNOTS + ANSWERS + UNPARSEABLE
