"""Weather condition codes and their descriptions in the languages the simulator speaks.

The codes, groups and icons follow OpenWeather's condition table; the translations are our own.
Language codes are the API's (``zh_cn``); ``sp`` is accepted for Spanish as the API does, and
an unknown language falls back to English.
"""

from __future__ import annotations

LANGS = ("en", "fr", "zh_cn", "it", "de", "ru", "ja", "nl", "es", "pt")
LANG_ALIASES = {"sp": "es", "zh-cn": "zh_cn", "cn": "zh_cn", "jp": "ja"}

# code -> (group, icon stem, description in each of LANGS, in that order)
CONDITIONS: dict[int, tuple[str, str, tuple[str, ...]]] = {
    800: ("Clear", "01", ("clear sky", "ciel dégagé", "晴", "cielo sereno", "klarer Himmel",
                          "ясно", "晴天", "onbewolkt", "cielo claro", "céu limpo")),
    801: ("Clouds", "02", ("few clouds", "peu nuageux", "少云", "poche nuvole",
                           "ein paar Wolken", "небольшая облачность", "薄い雲", "licht bewolkt",
                           "algunas nubes", "algumas nuvens")),
    802: ("Clouds", "03", ("scattered clouds", "partiellement nuageux", "散云", "nubi sparse",
                           "vereinzelte Wolken", "переменная облачность", "散在する雲",
                           "half bewolkt", "nubes dispersas", "nuvens dispersas")),
    803: ("Clouds", "04", ("broken clouds", "nuageux", "多云", "nuvoloso",
                           "überwiegend bewölkt", "облачно с прояснениями", "曇りがち",
                           "zwaar bewolkt", "muy nuboso", "nublado")),
    804: ("Clouds", "04", ("overcast clouds", "couvert", "阴", "cielo coperto", "bedeckt",
                           "пасмурно", "厚い雲", "geheel bewolkt", "cielo cubierto",
                           "céu encoberto")),
    300: ("Drizzle", "09", ("light intensity drizzle", "bruine légère", "小毛毛雨",
                            "pioviggine leggera", "leichter Nieselregen", "слабая морось",
                            "弱い霧雨", "lichte motregen", "llovizna ligera", "garoa fraca")),
    301: ("Drizzle", "09", ("drizzle", "bruine", "毛毛雨", "pioviggine", "Nieselregen",
                            "морось", "霧雨", "motregen", "llovizna", "garoa")),
    500: ("Rain", "10", ("light rain", "légère pluie", "小雨", "pioggia leggera",
                         "leichter Regen", "небольшой дождь", "小雨", "lichte regen",
                         "lluvia ligera", "chuva fraca")),
    501: ("Rain", "10", ("moderate rain", "pluie modérée", "中雨", "pioggia moderata",
                         "mäßiger Regen", "умеренный дождь", "適度な雨", "matige regen",
                         "lluvia moderada", "chuva moderada")),
    502: ("Rain", "10", ("heavy intensity rain", "forte pluie", "大雨", "pioggia intensa",
                         "starker Regen", "сильный дождь", "強い雨", "zware regen",
                         "lluvia intensa", "chuva forte")),
    200: ("Thunderstorm", "11", ("thunderstorm with light rain", "orage et pluie légère",
                                 "雷暴伴小雨", "temporale con pioggia leggera",
                                 "Gewitter mit leichtem Regen", "гроза с небольшим дождём",
                                 "小雨を伴う雷雨", "onweer met lichte regen",
                                 "tormenta con lluvia ligera", "trovoada com chuva fraca")),
    201: ("Thunderstorm", "11", ("thunderstorm with rain", "orage et pluie", "雷暴伴雨",
                                 "temporale con pioggia", "Gewitter mit Regen",
                                 "гроза с дождём", "雨を伴う雷雨", "onweer met regen",
                                 "tormenta con lluvia", "trovoada com chuva")),
    211: ("Thunderstorm", "11", ("thunderstorm", "orage", "雷暴", "temporale", "Gewitter",
                                 "гроза", "雷雨", "onweer", "tormenta", "trovoada")),
    600: ("Snow", "13", ("light snow", "légères chutes de neige", "小雪", "neve leggera",
                         "leichter Schneefall", "небольшой снег", "小雪", "lichte sneeuw",
                         "nevada ligera", "neve fraca")),
    601: ("Snow", "13", ("snow", "neige", "中雪", "neve", "Schnee", "снег", "雪", "sneeuw",
                         "nieve", "neve")),
    602: ("Snow", "13", ("heavy snow", "fortes chutes de neige", "大雪", "forte nevicata",
                         "starker Schneefall", "сильный снегопад", "大雪", "zware sneeuwval",
                         "nevada intensa", "neve forte")),
    701: ("Mist", "50", ("mist", "brume", "薄雾", "foschia", "trüb", "дымка", "靄", "nevel",
                         "neblina", "névoa")),
    721: ("Haze", "50", ("haze", "brume sèche", "霾", "caligine", "Dunst", "мгла", "煙霧",
                         "waas", "calima", "bruma")),
    741: ("Fog", "50", ("fog", "brouillard", "雾", "nebbia", "Nebel", "туман", "霧", "mist",
                        "niebla", "nevoeiro")),
}  # fmt: skip

# 16-point compass: (code, English name), as the XML format labels wind directions.
COMPASS = (
    ("N", "North"), ("NNE", "North-northeast"), ("NE", "NorthEast"), ("ENE", "East-northeast"),
    ("E", "East"), ("ESE", "East-southeast"), ("SE", "SouthEast"), ("SSE", "South-southeast"),
    ("S", "South"), ("SSW", "South-southwest"), ("SW", "Southwest"), ("WSW", "West-southwest"),
    ("W", "West"), ("WNW", "West-northwest"), ("NW", "Northwest"), ("NNW", "North-northwest"),
)  # fmt: skip

# Beaufort scale upper bounds in m/s and names.
BEAUFORT = (
    (0.5, "Calm"), (1.6, "Light air"), (3.4, "Light breeze"), (5.5, "Gentle Breeze"),
    (8.0, "Moderate breeze"), (10.8, "Fresh Breeze"), (13.9, "Strong breeze"),
    (17.2, "High wind, near gale"), (20.8, "Gale"), (24.5, "Severe Gale"), (28.5, "Storm"),
    (32.7, "Violent Storm"),
)  # fmt: skip


def normalise_lang(value: str | None) -> str:
    lang = (value or "en").strip().lower()
    lang = LANG_ALIASES.get(lang, lang)
    return lang if lang in LANGS else "en"


def describe(code: int, lang: str) -> str:
    return CONDITIONS[code][2][LANGS.index(lang)]


def compass(deg: int) -> tuple[str, str]:
    return COMPASS[round(deg / 22.5) % 16]


def beaufort(speed_ms: float) -> str:
    return next((name for bound, name in BEAUFORT if speed_ms < bound), "Hurricane")
