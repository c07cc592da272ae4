"""Units and currencies that change what a number means (5 km is not 5 miles).

Each surface form maps to a canonical unit; each canonical unit has a dimension. Two
texts disagree on units when both name units of one dimension and the sets differ
(`km` vs `mile`), or when one number carries different units (`5公斤` vs `5磅`).
"""

from __future__ import annotations

DIMENSION = {
    **dict.fromkeys(("km", "mile", "m", "cm", "mm", "inch", "foot", "yard", "li"), "length"),
    **dict.fromkeys(("kg", "g", "mg", "lb", "oz", "jin", "ton", "stone"), "mass"),
    **dict.fromkeys(
        ("l", "ml", "gallon", "cup", "tbsp", "tsp", "pint", "quart", "fl_oz"), "volume"
    ),
    **dict.fromkeys(("celsius", "fahrenheit", "kelvin"), "temperature"),
    **dict.fromkeys(("mph", "kmh", "knot"), "speed"),
    **dict.fromkeys(("kb", "mb", "gb", "tb", "pb"), "data"),
    **dict.fromkeys(
        ("second", "minute", "hour", "day", "week", "month", "year", "decade"), "time"
    ),
    **dict.fromkeys(
        ("usd", "eur", "gbp", "jpy", "cny", "hkd", "krw", "inr", "cad", "aud", "chf", "twd",
         "rub", "sgd", "btc"),
        "currency",
    ),
    "percent": "ratio",
}  # fmt: skip

# English surface forms. Ambiguous abbreviations (`m`, `g`, `l`, `h`, `min`, `in`) are
# only units right after a number; see EN_AFTER_NUMBER_ONLY.
EN_UNITS = {
    **dict.fromkeys(("km", "kms", "kilometer", "kilometers", "kilometre", "kilometres"), "km"),
    **dict.fromkeys(("mile", "miles", "mi"), "mile"),
    **dict.fromkeys(("meter", "meters", "metre", "metres", "m"), "m"),
    **dict.fromkeys(("cm", "centimeter", "centimeters", "centimetre", "centimetres"), "cm"),
    **dict.fromkeys(("mm", "millimeter", "millimeters", "millimetre", "millimetres"), "mm"),
    **dict.fromkeys(("inch", "inches"), "inch"),
    **dict.fromkeys(("foot", "feet", "ft"), "foot"),
    **dict.fromkeys(("yard", "yards", "yd"), "yard"),
    **dict.fromkeys(("kg", "kgs", "kilogram", "kilograms", "kilo", "kilos"), "kg"),
    **dict.fromkeys(("g", "gram", "grams", "gramme", "grammes"), "g"),
    **dict.fromkeys(("mg", "milligram", "milligrams"), "mg"),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), "lb"),
    **dict.fromkeys(("oz", "ounce", "ounces"), "oz"),
    **dict.fromkeys(("fl oz", "fluid ounce", "fluid ounces"), "fl_oz"),
    **dict.fromkeys(("ton", "tons", "tonne", "tonnes"), "ton"),
    **dict.fromkeys(("stone",), "stone"),
    **dict.fromkeys(("l", "liter", "liters", "litre", "litres"), "l"),
    **dict.fromkeys(("ml", "milliliter", "milliliters", "millilitre", "millilitres"), "ml"),
    **dict.fromkeys(("gallon", "gallons", "gal"), "gallon"),
    **dict.fromkeys(("cup", "cups"), "cup"),
    **dict.fromkeys(("tablespoon", "tablespoons", "tbsp", "tbs"), "tbsp"),
    **dict.fromkeys(("teaspoon", "teaspoons", "tsp"), "tsp"),
    **dict.fromkeys(("pint", "pints"), "pint"),
    **dict.fromkeys(("quart", "quarts"), "quart"),
    **dict.fromkeys(
        ("°c", "° c", "celsius", "centigrade", "degrees celsius", "degree celsius",
         "degrees c"),
        "celsius",
    ),
    **dict.fromkeys(
        ("°f", "° f", "fahrenheit", "degrees fahrenheit", "degree fahrenheit", "degrees f"),
        "fahrenheit",
    ),
    **dict.fromkeys(("kelvin",), "kelvin"),
    **dict.fromkeys(("mph", "miles per hour", "miles an hour", "mi/h"), "mph"),
    **dict.fromkeys(
        ("km/h", "kmh", "kph", "km per hour", "kilometers per hour", "kilometres per hour",
         "kilometers an hour", "km/hr"),
        "kmh",
    ),
    **dict.fromkeys(("knot", "knots"), "knot"),
    **dict.fromkeys(("kb", "kilobyte", "kilobytes"), "kb"),
    **dict.fromkeys(("mb", "megabyte", "megabytes"), "mb"),
    **dict.fromkeys(("gb", "gig", "gigs", "gigabyte", "gigabytes"), "gb"),
    **dict.fromkeys(("tb", "terabyte", "terabytes"), "tb"),
    **dict.fromkeys(("pb", "petabyte", "petabytes"), "pb"),
    **dict.fromkeys(("second", "seconds", "sec", "secs", "s"), "second"),
    **dict.fromkeys(("minute", "minutes", "min", "mins"), "minute"),
    **dict.fromkeys(("hour", "hours", "hr", "hrs", "h"), "hour"),
    **dict.fromkeys(("day", "days", "daily"), "day"),
    **dict.fromkeys(("week", "weeks", "weekly"), "week"),
    **dict.fromkeys(("month", "months", "monthly"), "month"),
    **dict.fromkeys(("year", "years", "yr", "yrs", "yearly", "annually", "annual"), "year"),
    **dict.fromkeys(("hourly",), "hour"),
    **dict.fromkeys(("decade", "decades"), "decade"),
    **dict.fromkeys(("usd", "dollar", "dollars", "buck", "bucks", "us dollars"), "usd"),
    **dict.fromkeys(("eur", "euro", "euros"), "eur"),
    **dict.fromkeys(("gbp", "pounds sterling", "quid"), "gbp"),
    **dict.fromkeys(("jpy", "yen"), "jpy"),
    **dict.fromkeys(("cny", "rmb", "yuan", "renminbi"), "cny"),
    **dict.fromkeys(("hkd",), "hkd"),
    **dict.fromkeys(("krw", "won"), "krw"),
    **dict.fromkeys(("inr", "rupee", "rupees", "rs"), "inr"),
    **dict.fromkeys(("cad",), "cad"),
    **dict.fromkeys(("aud",), "aud"),
    **dict.fromkeys(("sgd",), "sgd"),
    **dict.fromkeys(("krw",), "krw"),
    **dict.fromkeys(("chf", "franc", "francs"), "chf"),
    **dict.fromkeys(("btc", "bitcoin", "bitcoins"), "btc"),
    **dict.fromkeys(("%", "percent", "per cent", "percentage"), "percent"),
}  # fmt: skip
EN_CURRENCY_SYMBOLS = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr", "₩": "krw"}

# Abbreviations and words that are units only right after a number: `5 m`, `the m key`;
# `in 2 weeks`, `what year`; `won` is also the past of `win`.
EN_AFTER_NUMBER_ONLY = frozenset(
    {"m", "g", "l", "s", "h", "min", "mins", "sec", "secs", "hr", "hrs", "mi", "gal",
     "yd", "ft", "won", "rs", "cup", "cups", "kilo", "kilos", "gig", "gigs", "stone", "franc",
     "francs", "buck", "bucks", "percentage", "ton", "tons", "yr", "yrs", "tbs",
     "second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week",
     "weeks", "month", "months", "year", "years", "decade", "decades"}
)  # fmt: skip

# Chinese: unambiguous words count anywhere ("多少公斤"); single characters that are
# also parts of ordinary words (米饭, 升级, 今天, 杯子) only right after a number.
ZH_UNITS = {
    **dict.fromkeys(("公里", "千米"), "km"),
    **dict.fromkeys(("英里",), "mile"),
    **dict.fromkeys(("厘米", "公分"), "cm"),
    **dict.fromkeys(("毫米",), "mm"),
    **dict.fromkeys(("英寸", "寸"), "inch"),
    **dict.fromkeys(("英尺", "尺"), "foot"),
    **dict.fromkeys(("码",), "yard"),
    **dict.fromkeys(("公斤", "千克"), "kg"),
    **dict.fromkeys(("克",), "g"),
    **dict.fromkeys(("毫克",), "mg"),
    **dict.fromkeys(("磅",), "lb"),
    **dict.fromkeys(("盎司",), "oz"),
    **dict.fromkeys(("斤",), "jin"),
    **dict.fromkeys(("吨",), "ton"),
    **dict.fromkeys(("升", "公升"), "l"),
    **dict.fromkeys(("毫升",), "ml"),
    **dict.fromkeys(("加仑",), "gallon"),
    **dict.fromkeys(("杯",), "cup"),
    **dict.fromkeys(("摄氏度", "摄氏"), "celsius"),
    **dict.fromkeys(("华氏度", "华氏"), "fahrenheit"),
    **dict.fromkeys(("秒", "秒钟"), "second"),
    **dict.fromkeys(("分钟",), "minute"),
    **dict.fromkeys(("小时", "个小时", "钟头", "个钟头", "个钟"), "hour"),
    **dict.fromkeys(("天", "日"), "day"),
    **dict.fromkeys(("周", "个星期", "星期", "个礼拜", "礼拜"), "week"),
    **dict.fromkeys(("个月",), "month"),
    **dict.fromkeys(("年",), "year"),
    **dict.fromkeys(("元", "块", "块钱", "人民币", "rmb", "cny"), "cny"),
    **dict.fromkeys(("美元", "美金", "刀"), "usd"),
    **dict.fromkeys(("欧元",), "eur"),
    **dict.fromkeys(("英镑",), "gbp"),
    **dict.fromkeys(("日元", "日币"), "jpy"),
    **dict.fromkeys(("港币", "港元"), "hkd"),
    **dict.fromkeys(("韩元",), "krw"),
    **dict.fromkeys(("台币", "新台币"), "twd"),
    **dict.fromkeys(("卢布",), "rub"),
    **dict.fromkeys(("新币", "新加坡元"), "sgd"),
    **dict.fromkeys(("比特币",), "btc"),
    **dict.fromkeys(("%", "百分比"), "percent"),
    **dict.fromkeys(("kg",), "kg"),
    **dict.fromkeys(("km",), "km"),
    **dict.fromkeys(("g",), "g"),
    **dict.fromkeys(("kb",), "kb"),
    **dict.fromkeys(("mb", "m"), "mb"),
    **dict.fromkeys(("gb",), "gb"),
    **dict.fromkeys(("tb", "t"), "tb"),
    **dict.fromkeys(("ml",), "ml"),
    **dict.fromkeys(("l",), "l"),
    **dict.fromkeys(("mph",), "mph"),
    **dict.fromkeys(("km/h",), "kmh"),
}  # fmt: skip
ZH_AFTER_NUMBER_ONLY = frozenset(
    {"克", "升", "杯", "天", "日", "周", "星期", "礼拜", "年", "元", "块", "刀", "码", "寸",
     "尺", "秒", "g", "m", "t", "l", "个钟"}
)  # fmt: skip
# Periods said without a number: 按月付费, 每年, 月薪, 年化.
ZH_PERIODS = {
    **dict.fromkeys(("每天", "每日", "按天", "日薪", "日均"), "day"),
    **dict.fromkeys(("每周", "每星期", "每个星期", "按周", "周薪", "每礼拜"), "week"),
    **dict.fromkeys(
        ("每月", "每个月", "按月", "月付", "包月", "月费", "月薪", "月租", "月度", "每月份"),
        "month",
    ),
    **dict.fromkeys(("每年", "按年", "年付", "包年", "年费", "年薪", "年化", "年度"), "year"),
    **dict.fromkeys(("每小时", "按小时", "时薪"), "hour"),
}  # fmt: skip
