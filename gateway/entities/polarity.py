"""Antonym axes: words that flip a request's meaning while leaving its embedding almost
unchanged ("turn on dark mode" / "turn off dark mode", "上涨" / "下跌").

Each surface form maps to one or more (axis, pole) pairs. Two texts disagree when both
use an axis and their poles differ; a text that does not use an axis at all says
nothing about it (a paraphrase may simply not repeat the word). Synonyms share a pole
("lower" and "reduce", "关闭" and "关掉") so that paraphrases agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.entities.text import phrases, words

Pole = tuple[str, str]  # (axis, pole)


def inflect(*verbs: str) -> tuple[str, ...]:
    """Regular English verb forms: `enable` -> enable, enables, enabled, enabling."""
    forms: list[str] = []
    for verb in verbs:
        forms.append(verb)
        if verb.endswith("e"):
            forms += [verb + "s", verb + "d", verb[:-1] + "ing"]
        elif verb.endswith(("s", "sh", "ch", "x")):
            forms += [verb + "es", verb + "ed", verb + "ing"]
        elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
            forms += [verb[:-1] + "ies", verb[:-1] + "ied", verb + "ing"]
        else:
            forms += [verb + "s", verb + "ed", verb + "ing"]
    return tuple(forms)


# axis -> pole -> English surface forms (lower case; spaces match spaces or hyphens).
EN_AXES: dict[str, dict[str, Iterable[str]]] = {
    "switch": {
        "on": (*inflect("enable", "activate", "open", "unmute"), "turn on", "turns on",
               "turned on", "turning on", "switch on", "switched on", "switching on",
               "opening"),
        "off": (*inflect("disable", "deactivate", "close", "mute"), "turn off", "turns off",
                "turned off", "turning off", "switch off", "switched off", "switching off",
                "shut down", "shut off", "shuts down", "shutdown", "closing"),
    },
    "lock": {"lock": inflect("lock"), "unlock": inflect("unlock")},
    "hide": {"hide": ("hide", "hides", "hidden", "hiding"), "show": inflect("unhide", "reveal")},
    "login": {
        "in": ("log in", "logs in", "logged in", "logging in", "login", "log into",
               "sign in", "signed in", "signing in", "sign into", "signin", "log on"),
        "out": ("log out", "logs out", "logged out", "logging out", "logout", "sign out",
                "signed out", "signing out", "signout", "log off"),
    },
    "subscribe": {"subscribe": inflect("subscribe"), "unsubscribe": inflect("unsubscribe")},
    "install": {"install": inflect("install", "reinstall"), "uninstall": inflect("uninstall")},
    "connect": {
        "connect": inflect("connect", "pair"),
        "disconnect": inflect("disconnect", "unpair"),
    },
    "mount": {"mount": inflect("mount"), "unmount": inflect("unmount")},
    "allow": {
        "allow": (*inflect("allow", "permit", "unblock", "whitelist"), "allowed"),
        "block": (*inflect("block", "forbid", "prohibit", "blacklist", "disallow", "deny"),
                  "ban", "bans", "banned", "banning", "forbidden"),
    },
    "accept": {"accept": inflect("accept", "approve"), "reject": inflect("reject", "decline")},
    "include": {
        "include": (*inflect("include"), "inclusive"),
        "exclude": (*inflect("exclude"), "exclusive of"),
    },
    "add": {
        "add": (*inflect("add", "insert", "append"), "added"),
        "remove": inflect("remove", "delete", "erase"),
    },
    "level": {
        "up": (*inflect("increase", "raise", "boost", "grow", "rise", "gain", "maximize",
                        "maximise", "expand", "enlarge"),
               "rose", "risen", "grew", "grown", "go up", "goes up", "went up", "going up",
               "higher", "highest", "more", "most", "max", "maximum", "larger", "largest",
               "bigger", "biggest", "greater", "greatest", "taller", "tallest", "longer",
               "longest", "heavier", "heaviest", "upper", "scroll up", "turn up", "speed up",
               "more than", "at least"),
        "down": (*inflect("decrease", "reduce", "lower", "shrink", "drop", "decline",
                          "minimize", "minimise", "lose"),
                 "fell", "fallen", "fall", "falls", "falling", "dropped", "dropping",
                 "lost", "losing", "go down", "goes down", "went down", "going down",
                 "lowest", "less", "least", "fewer", "fewest", "min", "minimum", "smaller",
                 "smallest", "shorter", "shortest", "lighter", "lightest", "scroll down",
                 "turn down", "less than", "at most"),
    },
    "speed": {
        "fast": ("fast", "faster", "fastest", "quick", "quicker", "quickest", "quickly",
                 *inflect("accelerate")),
        "slow": ("slow", "slower", "slowest", "slowly", "slow down", "slows down",
                 "slowed down", *inflect("decelerate")),
    },
    "quality": {
        "good": ("good", "better", "best"),
        "bad": ("bad", "worse", "worst", "poor", "poorly"),
    },
    "price": {
        "cheap": ("cheap", "cheaper", "cheapest", "inexpensive", "affordable",
                  "least expensive", "less expensive", "low cost", "low-cost", "lowest price",
                  "lowest cost"),
        "expensive": ("expensive", "more expensive", "most expensive", "pricey", "pricier",
                      "priciest", "costly", "overpriced", "highest price"),
    },
    "trade": {
        "buy": (*inflect("buy", "purchase"), "bought"),
        "sell": ("sell", "sells", "selling", "sold"),
    },
    "import": {"import": inflect("import"), "export": inflect("export")},
    "transfer": {"upload": inflect("upload"), "download": inflect("download")},
    "time": {
        "before": ("before", "prior to", "ahead of", "earlier than"),
        "after": ("after", "later than", "afterwards"),
    },
    "position": {
        "above": (*inflect("exceed"), "above"),
        "below": ("below", "beneath", "underneath"),
    },
    "win": {
        "win": ("win", "wins", "won", "winning", "winner", "winners", "victory"),
        "lose": ("lose", "loses", "lost", "losing", "loser", "losers", "defeat", "defeated"),
    },
    "send": {"send": ("send", "sends", "sent", "sending"), "receive": inflect("receive")},
    "gift": {"give": ("give", "gives", "gave", "given", "giving"), "receive": inflect("receive")},
    "deposit": {"deposit": inflect("deposit"), "withdraw": (*inflect("withdraw"), "withdrawal")},
    "lend": {"lend": ("lend", "lends", "lent", "lending"), "borrow": inflect("borrow")},
    "git": {"push": inflect("push"), "pull": inflect("pull")},
    "crypt": {
        "encrypt": (*inflect("encrypt"), "encryption"),
        "decrypt": (*inflect("decrypt"), "decryption"),
    },
    "compress": {
        "compress": (*inflect("compress"), "compression"),
        "decompress": (*inflect("decompress", "unzip", "extract"), "decompression"),
    },
    "encode": {"encode": inflect("encode", "serialize", "serialise"),
               "decode": inflect("decode", "deserialize", "deserialise")},
    "start": {
        "start": (*inflect("start", "begin", "launch"), "began", "begun", "beginning"),
        "stop": (*inflect("stop", "end", "finish", "quit", "halt", "terminate"), "stopped",
                 "stopping", "quitting"),
    },
    "zoom": {"in": ("zoom in", "zooms in", "zoomed in", "zooming in"),
             "out": ("zoom out", "zooms out", "zoomed out", "zooming out")},
    "merge": {
        "merge": inflect("merge", "combine", "join", "concatenate"),
        "split": (*inflect("separate", "divide"), "split", "splits", "splitting"),
    },
    "undo": {"undo": ("undo", "undoes", "undid", "undone", *inflect("revert")),
             "redo": ("redo", "redoes", "redid", "redone")},
    "safety": {
        "safe": ("safe", "safely", "safer", "safest", "harmless", "non-toxic", "nontoxic"),
        "unsafe": ("unsafe", "dangerous", "toxic", "poisonous", "harmful", "risky",
                   "hazardous"),
    },
    "health": {"healthy": ("healthy", "healthier", "healthiest"), "unhealthy": ("unhealthy",)},
    "legal": {
        "legal": ("legal", "legally", "lawful"),
        "illegal": ("illegal", "illegally", "unlawful"),
    },
    "temperature": {
        "hot": ("hot", "hotter", "hottest", "warm", "warmer", "warmest"),
        "cold": ("cold", "colder", "coldest", "freezing", "chilly"),
    },
    "age": {
        "new": ("new", "newer", "newest", "latest"),
        "old": ("old", "older", "oldest", "outdated"),
    },
    "gender": {
        "male": ("men", "man", "male", "males", "boy", "boys", "men's", "mens", "gentlemen"),
        "female": ("women", "woman", "female", "females", "girl", "girls", "women's",
                   "womens", "ladies", "lady"),
    },
    "life_stage": {
        "adult": ("adult", "adults", "grown-up", "grown-ups", "grownup", "grownups"),
        "child": ("child", "children", "kid", "kids", "baby", "babies", "infant", "infants",
                  "toddler", "toddlers", "newborn", "newborns"),
        "teen": ("teen", "teens", "teenager", "teenagers", "adolescent", "adolescents"),
    },
    "online": {"online": ("online",), "offline": ("offline",)},
    "travel": {
        "arrive": (*inflect("arrive"), "arrival", "arrivals"),
        "depart": (*inflect("depart"), "departure", "departures"),
    },
    "merit": {
        "pro": ("advantage", "advantages", "benefit", "benefits", "pros", "upside", "upsides"),
        "con": ("disadvantage", "disadvantages", "drawback", "drawbacks", "downside",
                "downsides", "cons"),
    },
    "difficulty": {
        "easy": ("easy", "easier", "easiest", "easily"),
        "hard": ("hard", "harder", "hardest", "difficult"),
    },
    "firmness": {
        "hard": ("hard", "harder", "hard-boiled"),
        "soft": ("soft", "softer", "soft-boiled"),
    },
    "feeling": {"love": ("love", "loves", "loved"), "hate": ("hate", "hates", "hated")},
    "exam": {"pass": ("pass", "passes", "passed"), "fail": ("fail", "fails", "failed")},
    "correct": {
        "correct": ("correct", "correctly"),
        "wrong": ("wrong", "incorrect", "incorrectly"),
    },
    "grade": {"upgrade": inflect("upgrade"), "downgrade": inflect("downgrade")},
    "value": {"appreciate": inflect("appreciate"), "depreciate": inflect("depreciate")},
    "heading": {"north": ("northbound",), "south": ("southbound",)},
    "sort_order": {
        "ascending": ("ascending", "ascending order", "asc", "increasing order"),
        "descending": ("descending", "descending order", "desc", "decreasing order",
                       "reverse order"),
    },
    "letter_case": {
        "upper": ("uppercase", "upper case", "upper-case", "capital letters", "all caps"),
        "lower": ("lowercase", "lower case", "lower-case", "small letters"),
    },
    "side": {
        "left": ("left side", "left-hand", "left hand", "turn left", "left click", "left-click",
                 "left-align", "left align", "on the left", "to the left", "left-aligned"),
        "right": ("right side", "right-hand", "right hand", "turn right", "right click",
                  "right-click", "right-align", "right align", "on the right", "to the right",
                  "right-aligned"),
    },
    "io": {"read": ("read", "reads", "reading"), "write": ("write", "writes", "writing", "wrote")},
    "tenure": {"current": ("current", "incumbent"), "former": ("former", "ex", "previous")},
}  # fmt: skip

# "turn the lights on", "switch it off": a verb, up to two words, then on/off.
EN_SPLIT_PHRASALS = (
    (
        r"\b(?:turn|switch)(?:s|ed|ing)?\s+(?:[a-z0-9'-]+\s+){1,3}?on\b(?=\s*(?:$|[?.!,;]))",
        ("switch", "on"),
    ),
    (r"\b(?:turn|switch)(?:s|ed|ing)?\s+(?:[a-z0-9'-]+\s+){1,3}?off\b", ("switch", "off")),
)
# Words that end English phrases containing polarity words that mean something else.
EN_NOT_POLARITY = phrases(
    """
    hard drive,  hard drives,  hard disk,  hard disks,  hard copy,  hard reset,  open source,
    open-source,  new york,  new zealand,  new jersey,  new mexico,  new delhi,  new orleans,
    new england,  new hampshire,  new year,  new years,  good morning,  good night,
    good evening,  good afternoon,  good friday,  best buy,  old navy,  how old,  years old,
    year old,  year-old,  years-old,  after all,  more or less,  cold brew,  fall back,
    fallback,  add-on,  add-ons,  addon,  end up,  in the end,  hot dog,  hot dogs,  hotspot,
    hot spot,  cold war
    """
)
# "over $50" / "under 300 calories": above and below only before a quantity.
EN_QUANTITY_POSITION = (
    (
        r"\b(?:over|more than)\s+(?=[$€£¥]?\d|(?:one|two|three|four|five|six|seven|eight|nine|"
        r"ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|a hundred|a thousand)\b)",
        ("position", "above"),
    ),
    (
        r"\b(?:under|less than)\s+(?=[$€£¥]?\d|(?:one|two|three|four|five|six|seven|eight|nine|"
        r"ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|a hundred|a thousand)\b)",
        ("position", "below"),
    ),
)

# axis -> pole -> Chinese surface forms.
ZH_AXES: dict[str, dict[str, Iterable[str]]] = {
    "switch": {
        "on": ("打开", "开启", "启用", "开通", "开着", "开机", "开灯", "打开了"),
        "off": ("关闭", "关掉", "关上", "关机", "关灯", "禁用", "停用", "关了"),
    },
    "allow": {
        "allow": ("允许", "准许", "放行", "解除屏蔽", "解封", "开放"),
        "block": ("禁止", "阻止", "屏蔽", "拦截", "封禁", "拉黑"),
    },
    "include": {"include": ("包含", "包括", "含税"), "exclude": ("排除", "除去")},
    "add": {
        "add": ("添加", "增加", "新增", "加入", "插入"),
        "remove": ("删除", "删掉", "移除", "去掉", "去除", "清除"),
    },
    "level": {
        "up": ("增加", "提高", "提升", "增长", "上涨", "涨", "升高", "上升", "调高", "调大",
               "放大", "加大", "变大", "增大", "最高", "最大", "最多", "更多", "高血压",
               "高血糖", "血压高", "血糖高", "涨价", "加仓"),
        "down": ("减少", "降低", "下降", "下跌", "跌", "调低", "调小", "缩小", "减小",
                 "变小", "最低", "最小", "最少", "更少", "低血压", "低血糖", "血压低",
                 "血糖低", "降价", "减仓"),
    },
    "speed": {"fast": ("加快", "加速", "更快", "最快", "变快", "提速"),
              "slow": ("减慢", "减速", "更慢", "最慢", "变慢", "降速")},
    "quality": {
        "good": ("最好", "更好", "最佳", "最棒"),
        "bad": ("最差", "更差", "最坏", "更糟", "最烂"),
    },
    "price": {
        "cheap": ("便宜", "实惠", "低价", "廉价"),
        "expensive": ("贵", "昂贵", "高价", "贵的"),
    },
    # 哪里有卖 / 有卖的吗 ask where to buy.
    "trade": {"buy": ("买", "购买", "买入", "入手", "购入", "有卖", "有的卖", "有得卖"),
              "sell": ("卖", "卖出", "出售", "抛售")},
    "import": {"import": ("导入", "进口"), "export": ("导出", "出口")},
    "transfer": {"upload": ("上传",), "download": ("下载",)},
    "time": {"before": ("之前", "以前"), "after": ("之后", "以后")},
    "position": {"above": ("以上", "高于", "超过", "大于", "多于"),
                 "below": ("以下", "低于", "小于", "少于")},
    "install": {"install": ("安装", "装上"), "uninstall": ("卸载",)},
    "crypt": {"encrypt": ("加密",), "decrypt": ("解密",)},
    "compress": {"compress": ("压缩",), "decompress": ("解压", "解压缩")},
    "encode": {"encode": ("编码",), "decode": ("解码",)},
    "lock": {"lock": ("锁定", "上锁", "加锁", "锁屏"), "unlock": ("解锁", "开锁")},
    "login": {"in": ("登录", "登陆", "登入"), "out": ("退出登录", "注销", "登出")},
    "subscribe": {
        "subscribe": ("订阅", "关注"),
        "unsubscribe": ("取消订阅", "取关", "取消关注", "退订"),
    },
    "border": {"enter": ("入境",), "exit": ("出境",)},
    "deposit": {"deposit": ("存款", "存钱", "充值", "转入"),
                "withdraw": ("取款", "取钱", "提现", "转出")},
    "safety": {"safe": ("安全",), "unsafe": ("危险", "有毒", "有害")},
    "gender": {"male": ("男",), "female": ("女",)},
    "life_stage": {
        "adult": ("成人", "成年人", "大人"),
        "child": ("儿童", "孩子", "小孩", "宝宝", "婴儿", "幼儿", "小朋友", "新生儿", "童"),
        "teen": ("青少年",),
    },
    "win": {"win": ("赢", "获胜", "胜利"), "lose": ("输了", "输给", "失利", "战败")},
    "merit": {"pro": ("好处", "优点", "优势", "益处"),
              "con": ("坏处", "缺点", "劣势", "弊端", "害处")},
    "start": {"start": ("开始", "启动"), "stop": ("停止", "结束", "暂停")},
    "stack": {"frontend": ("前端",), "backend": ("后端",)},
    "grade": {"upgrade": ("升级",), "downgrade": ("降级",)},
    "value": {"appreciate": ("升值",), "depreciate": ("贬值",)},
    "version": {"new": ("新版", "新版本", "最新版"), "old": ("旧版", "旧版本", "老版本")},
    "sort_order": {
        "ascending": ("升序", "从小到大", "由小到大"),
        "descending": ("降序", "从大到小", "由大到小"),
    },
    "letter_case": {"upper": ("大写",), "lower": ("小写",)},
    "side": {"left": ("左边", "左侧", "左转", "左键", "左对齐", "左手"),
             "right": ("右边", "右侧", "右转", "右键", "右对齐", "右手")},
    "io": {"read": ("读取", "读入"), "write": ("写入", "写出")},
    "tenure": {"current": ("现任",), "former": ("前任", "上一任")},
    "zoom": {"in": ("放大",), "out": ("缩小",)},
    "online": {"online": ("在线", "线上", "联网"), "offline": ("离线", "线下", "断网")},
    "difficulty": {"easy": ("容易", "简单"), "hard": ("困难", "难")},
    "firmness": {"hard": ("硬",), "soft": ("软",)},
    "meal_time": {
        "breakfast": ("早餐", "早饭"),
        "lunch": ("午餐", "午饭"),
        "dinner": ("晚餐", "晚饭"),
    },
}  # fmt: skip

# X前 / X后 for the events people time things around: 饭前 vs 饭后, 睡前 vs 睡后.
ZH_EVENTS_BEFORE_AFTER = words(
    """
    饭 睡 睡觉 餐 产 婚 术 课 考 考试 赛 比赛 运动 跑步 健身 吃饭 出发 登机 上班 下班 开学 放假
    起床 洗澡 喝酒 手术 怀孕 分娩 退休 毕业 结婚 用药 服药 剧烈运动
    """
)
# Chinese words containing a polarity character that mean something else.
ZH_NOT_POLARITY = words(
    """
    贵州 贵阳 贵姓 贵宾 宝贵 富贵 珍贵 高贵 尊贵 男女 女儿 妇女 童话 涨知识 跌倒 摔跌 买卖 难道
    难过 灾难 难民 遇难 难免 难怪 难忘 开始了解 出口处 最好别 最好不要
    """
)


def surface_map(axes: dict[str, dict[str, Iterable[str]]]) -> dict[str, tuple[Pole, ...]]:
    """Surface form -> every (axis, pole) it stands for (`lose`: level down, and lose)."""
    mapping: dict[str, list[Pole]] = {}
    for axis, poles in axes.items():
        for pole, surfaces in poles.items():
            for surface in surfaces:
                entry = mapping.setdefault(surface, [])
                if (axis, pole) not in entry:
                    entry.append((axis, pole))
    return {surface: tuple(poles) for surface, poles in mapping.items()}
