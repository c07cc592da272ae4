"""Word lists for the near-miss term check (`terms.py`): what is not a content word, and
which content words say the same (data only)."""

from __future__ import annotations

from gateway.entities.text import words

# English words that never make two requests different on their own: function words,
# auxiliaries and modals, question words, pronouns (see `persons.py`), politeness,
# fillers and vague quantifiers. "best" and "good" are here too: "the best way to learn
# Java" and "a good way to learn Java" ask the same.
EN_STOPWORDS = frozenset(
    words(
        """
        a an the this that these those there here it its itself they them their theirs
        themselves i me my mine myself we us our ours ourselves you your yours yourself
        yourselves he him his himself she her hers herself one ones oneself someone somebody
        anyone anybody everyone everybody something anything everything nothing
        is am are was were be been being do does did done doing have has had having
        can could may might must shall should will would ought need needs needed
        isnt arent wasnt werent dont doesnt didnt havent hasnt hadnt cant couldnt wont wouldnt
        shouldnt mustnt im ive id youre youve theyre whats hows whos wheres whys thats theres
        how what which who whom whose why when where whether if whatever whichever however
        and or but nor so yet either neither both than then also too as because since while
        of in on at to for from by with without about into onto over under up down out off
        through via per between among against within upon towards toward around
        not no all any some each every few several many much more most less least lot lots
        other others another such same own only just even still ever already again very
        really actually basically exactly simply truly quite pretty rather fairly somewhat
        probably possibly maybe perhaps definitely certainly surely generally usually
        typically normally especially particularly
        please kindly pls plz thanks thank hi hello hey ok okay
        best good great better nice proper right correct ideal top way ways possible
        thing things stuff kind kinds sort of type types
        get gets getting got gotten go goes going went gone make makes making made
        know knows knowing knew tell tells telling told explain explains help helps
        want wants wanted like likes let lets say says said think thinks thought
        able unable try tries trying keep keeps kept seem seems seemed feel feels become
        becomes became call called known featured used found asked according due back
        actual major main basic huge absolute absolutely highly extremely totally really
        such lesser overall specific particular certain whole entire various different
        general usual exact real
        world people person country city example examples fact facts information info
        detail details idea ideas opinion opinions view views suggestion suggestions
        u r ur etc eg ie vs versus
        """
    )
) - {"sort", "type", "types"}

# Irregular forms, reduced to the base form before stemming.
EN_IRREGULAR = {
    "bought": "buy", "wrote": "write", "written": "write", "went": "go", "gone": "go",
    "ate": "eat", "eaten": "eat", "took": "take", "taken": "take", "gave": "give",
    "given": "give", "found": "find", "began": "begin", "begun": "begin", "chose": "choose",
    "chosen": "choose", "knew": "know", "known": "know", "grew": "grow", "grown": "grow",
    "drove": "drive", "driven": "drive", "spent": "spend", "sent": "send", "lost": "lose",
    "paid": "pay", "built": "build", "felt": "feel", "left": "leave", "met": "meet",
    "ran": "run", "sold": "sell", "taught": "teach", "caught": "catch", "brought": "bring",
    "fell": "fall", "fallen": "fall", "held": "hold", "kept": "keep", "slept": "sleep",
    "spoke": "speak", "spoken": "speak", "stole": "steal", "stolen": "steal", "won": "win",
    "wore": "wear", "worn": "wear", "broke": "break", "broken": "break", "forgot": "forget",
    "forgotten": "forget", "became": "become", "understood": "understand", "saw": "see",
    "seen": "see", "flew": "fly", "flown": "fly", "hid": "hide", "hidden": "hide",
    "men": "man", "women": "woman", "children": "child", "people": "person", "mice": "mouse",
    "feet": "foot", "teeth": "tooth", "lives": "life", "wives": "wife", "knives": "knife",
    "leaves": "leaf", "halves": "half", "analyses": "analysis", "criteria": "criterion",
    "phenomena": "phenomenon", "data": "datum", "dying": "die", "lying": "lie",
    "tying": "tie",
}  # fmt: skip

# Groups of English words (base forms) that ask the same thing in a request.
EN_SYNONYMS: tuple[frozenset[str], ...] = tuple(
    frozenset(words(group))
    for group in (
        "buy purchase",
        "big large huge",
        "small little tiny",
        "begin start commence",
        "fix repair resolve solve",
        "car automobile",
        "learn study",
        "job work career employment",
        "fast quick quickly rapid rapidly speedy fastest quickest faster quicker",
        "method way technique approach",
        "tip advice suggestion recommendation",
        "improve enhance",
        "increase boost raise",
        "decrease reduce lower lessen",
        "lose shed",
        "stop quit",
        "get obtain acquire gain",
        "make create build",
        "use utilize usage",
        "help assist",
        "choose pick select",
        "need require",
        "movie film",
        "phone mobile cellphone smartphone cell",
        "computer pc",
        "photo picture image pic",
        "kid child",
        "mistake error",
        "answer reply respond",
        "question query",
        "show display",
        "end finish complete",
        "hard difficult tough",
        "easy simple easiest simplest",
        "internet online web",
        "website site",
        "email mail",
        "tv television",
        "app application",
        "earn make",
        "happy glad",
        "meaning mean",
        "difference different differ",
        "affect impact effect",
        "benefit advantage",
        "drawback disadvantage",
        "country nation",
        "doctor physician",
        "money cash",
        "hire recruit",
        "fire dismiss",
        "purpose goal aim",
        "reason cause",
        "feature characteristic",
        "role function",
        "example instance",
        "important significant",
        "famous popular well-known",
        "cheap inexpensive affordable",
        "shop store",
        "trip travel journey",
        "delete remove erase",
        "create generate",
        "prepare ready",
        "talk speak",
        "exam test",
        "salary pay wage",
        "dollar buck",
        "guy man",
        "girl woman",
        "wife spouse",
        "husband spouse",
        "grow increase",
        "happen occur",
        "scare frighten",
        "intelligent smart",
        "sick ill",
        "daily everyday",
        "correct right accurate",
        "depression depressed",
        "anxiety anxious",
        "lose loss",
        "deal cope handle manage tackle",
        "issue problem trouble",
        "relate link connect",
        "scared afraid fear frightened",
        "watch see view stream",
        "check see view look verify",
        "encounter experience",
        "technology tech technical",
        "choice option alternative",
        "rule regulation law",
        "cost price",
        "biggest largest",
        "writer author",
    )
)

# Chinese words and characters that never make two requests different on their own:
# particles, auxiliaries, question words, pronouns (see `persons.py`), measure words,
# conjunctions and prepositions, politeness and fillers. Longest match first, so 什么
# goes before 什 and 可以 before 以.
ZH_FUNCTION_WORDS = frozenset(
    words(
        """
        请问 请教 问一下 问下 求助 求教 求解 求救 跪求 急求 急用 急切 在线等 坐等 谢谢 多谢 感谢
        十分感谢 感激不尽 帮帮忙 帮忙 帮 高手 大神 大家 各位 朋友们 亲们 亲 哪位 知道的 知道
        告诉 说说 说 推荐 介绍 求 寻 找 搜 问 请 急 附图 如题 哒
        怎么样 怎么办 怎么回事 怎么 怎样 怎麼 如何 咋样 咋办 咋 什么样 什么 什麽 啥样 啥 哪里
        哪儿 哪些 哪个 哪家 哪种 哪 为什么 为何 为啥 干嘛 多少 几 谁 何 是否 是不是 有没有 能不能
        可不可以 会不会 要不要 可以 可否 能否 能够 能 可 会 要 想 需要 应该 应当 该 得 必须 需 用
        来 去 给 让 使 把 被 对于 关于 对 从 向 往 于 为 以 在 到 跟 和 与 及 或者 或是 或 还是
        并且 而且 并 而 且 但是 但 如果 的话 因为 所以 就是 就 都 也 还 又 再 才 只 很 非常 特别
        比较 太 挺 更 更加 真的 真 到底 究竟 其实 确实 一定 总是 老是 经常 常常 常 总 老 一直
        突然 已经 已 直接 大概 大约 约 一般 平时 通常 超 好多 许多 很多 那么 这么 多么 特 尤其
        十分 极 刚刚 刚 正在 正 快 将要 将 必 好 点 一点 好点 有点
        这个 那个 这些 那些 这样 那样 这种 那种 这 那 此 其 某 各 每 些 一下 一些 一个 一种 有些
        有 是 叫 称为 算 属于 等于 就是说 指 代表 意思 含义 意义
        个 款 部 台 张 位 种 本 只 条 件 首 篇 家 份 次 遍 回 支 辆 套 双 块 颗 粒 瓶 段 句 项
        名字 名称 效果 情况 问题 方法 办法 方式 东西 事情 事 地方 内容 功能 时候 时间 时 方面
        我们 你们 他们 她们 它们 咱们 自己 我 你 您 他 她 它 咱 俺 们 人家 别人
        的 地 得 了 着 过 吗 呢 吧 啊 呀 嘛 么 哦 哈 啦 咯 呗 哇 嗯 噢 喔 阿 么样 样 子 儿 里面
        里 中 内 面
        不 没 没有 别 不要 未 无法 无
        """
    )
)

# Single characters whose swap reverses a request: "左耳朵疼" / "右耳朵疼".
ZH_ANTONYMS = frozenset(
    frozenset(pair)
    for pair in words(
        """
        左右 上下 前后 大小 多少 高低 长短 深浅 新旧 男女 冷热 胖瘦 快慢 远近 早晚 东西 南北
        内外 正负 真假 黑白 买卖 借还 进出 开关 收发 加减 增减 升降 涨跌 公母 雌雄 阴阳 单双
        粗细 厚薄 宽窄 轻重 强弱 软硬 干湿 甜苦 贵贱 胜负 输赢 老少 难易 生熟 首末 始终
        """
    )
)

# Chinese variants that ask the same thing: each group's members are interchangeable
# when they are what one text changes against the other.
ZH_VARIANTS: tuple[frozenset[str], ...] = tuple(
    frozenset(words(group))
    for group in (
        "截图 截屏 图 屏",
        "手机 电话 机",
        "钱 元 块 块钱",
        "电脑 计算机",
        "照片 图片 相片 图",
        "办法 方法 方式 法",
        "意思 含义 意义 涵义",
        "区别 不同 差别 差异 不一样 区分",
        "购买 买 购",
        "多久 多长时间 时间",
        "好 好不好 好吗",
        "为 做",
        "解决 处理 办",
        "弄 搞 做 整",
        "开通 开 办理 办",
        "用 使用",
        "看 观看 查看 查",
        "找 寻找 查找",
        "价格 价钱 价 多少钱 钱",
        "修改 更改 改",
        "删除 删 去掉",
        "下载 下",
        "推荐 介绍",
        "最好 最佳",
        "衣服 衣",
        "适合 合适",
        "为什么 为何 原因",
        "漂亮 好看 美",
        "好听 好听的",
        "东西 物品",
        "号 号码",
        "网 网站",
        "学习 学",
        "注册 申请",
        "快 迅速 尽快",
        "作用 功效 功能 用处 用途",
        "帐 账",
        "起 取",
        "赚 挣",
        "景色 景象 色 象",
        "沉溺 沉迷 溺 迷",
        "男人 男生 男士 男性 人 生 士 性",
        "女人 女生 女士 女性",
        "专家 高人 高手",
        "调整 更改 修改 改 调",
        "重新 再次 再",
        "久 长时间 多长时间",
        "还清 还完 清 完",
        "贴 敷",
        "公历 阳历 新历",
        "农历 阴历 旧历",
        "锅 煲",
        "举行 举办 召开 行 办",
        "解除 取消",
        "改 换 更换",
        "订 定",
        "出 岀",
        "好玩 有趣 不错 错",
        "下一句 后一句 下句 后面一句 后面",
        "上一句 前一句 上句 前面一句 前面",
    )
)

# Words that narrow a request when one text adds them: where, how, which part, which
# kind. Other added words are usually a paraphrase restating the question ("the actual
# source of gravity", "video game development"), so only these count as additions.
EN_QUALIFIERS = frozenset(
    words(
        """
        inland coastal downtown uptown suburban suburb suburbs rural urban nearby local
        abroad overseas domestic international foreign offshore remote outskirts indoor
        indoors outdoor outdoors underground underwater
        immediately instantly overnight permanently temporarily legally illegally secretly
        anonymously manually automatically
        piece pieces part parts portion section chapter paragraph sentence page segment
        fraction
        red blue green yellow black white grey gray brown orange purple pink golden silver
        dark pale deep
        raw cooked frozen fresh dried smoked fried baked boiled grilled roasted
        male female wild dead alive
        """
    )
)
ZH_QUALIFIERS = frozenset(
    words(
        """
        远郊 近郊 郊区 郊外 市区 市中心 城区 城里 农村 乡下 乡村 周边 附近 国内 国外 海外 本地 外地
        省内 省外 境内 境外 室内 室外 户外 野外 线上 线下 部分 局部 一半 二手 最新 最早
        深 浅 淡 暗 亮 鲜 玫 粉 紫 红 黄 蓝 绿 黑 白 灰 棕 橙 金 银
        熏 烤 炸 炒 煮 蒸 腌 熟 冰 冻 热 冷 凉 死 活 野 新 旧 多 少 男 女 公 母 左 右
        """
    )
)
