"""Chinese word lists for the slot extractors (data only).

spaCy's blank `zh` pipeline has no NER, so names come from these lists (longest match
first) plus the Latin-script tokens inside the Chinese text (`iPhone`, `Python`).
"""

from __future__ import annotations

from gateway.entities.text import words

# Relative time words -> canonical value.
TIME_WORDS = {
    **dict.fromkeys(("今天", "今日", "今儿"), "today"),
    **dict.fromkeys(("明天", "明日", "明儿"), "tomorrow"),
    **dict.fromkeys(("昨天", "昨日", "昨儿"), "yesterday"),
    **dict.fromkeys(("后天",), "day after tomorrow"),
    **dict.fromkeys(("大后天",), "in three days"),
    **dict.fromkeys(("前天",), "day before yesterday"),
    **dict.fromkeys(("今晚", "今夜", "今天晚上", "今天夜里"), "tonight"),
    **dict.fromkeys(("明晚", "明天晚上", "明夜"), "tomorrow night"),
    **dict.fromkeys(("昨晚", "昨天晚上", "昨夜"), "last night"),
    **dict.fromkeys(("今早", "今天早上", "今晨"), "this morning"),
    **dict.fromkeys(("明早", "明天早上"), "tomorrow morning"),
    **dict.fromkeys(("现在", "目前", "当前", "此刻", "眼下", "如今", "当下", "实时"), "now"),
    **dict.fromkeys(("最近", "近期", "近来"), "recently"),
    **dict.fromkeys(("今年", "本年"), "this year"),
    **dict.fromkeys(("去年",), "last year"),
    **dict.fromkeys(("明年",), "next year"),
    **dict.fromkeys(("前年",), "year before last"),
    **dict.fromkeys(("后年",), "year after next"),
    **dict.fromkeys(
        ("本周", "这周", "这个星期", "这星期", "这礼拜", "这个礼拜", "本星期"), "this week"
    ),
    **dict.fromkeys(("下周", "下个星期", "下星期", "下礼拜", "下个礼拜"), "next week"),
    **dict.fromkeys(("上周", "上个星期", "上星期", "上礼拜", "上个礼拜"), "last week"),
    **dict.fromkeys(("本周末", "这周末", "这个周末"), "this weekend"),
    **dict.fromkeys(("下周末", "下个周末"), "next weekend"),
    **dict.fromkeys(("上周末", "上个周末"), "last weekend"),
    **dict.fromkeys(("本月", "这个月", "这月", "当月"), "this month"),
    **dict.fromkeys(("下个月", "下月"), "next month"),
    **dict.fromkeys(("上个月", "上月"), "last month"),
    **dict.fromkeys(("本季度", "这个季度"), "this quarter"),
    **dict.fromkeys(("上季度", "上个季度"), "last quarter"),
    **dict.fromkeys(("下季度", "下个季度"), "next quarter"),
    **dict.fromkeys(("上半年",), "first half of the year"),
    **dict.fromkeys(("下半年",), "second half of the year"),
    **dict.fromkeys(("上半场",), "first half"),
    **dict.fromkeys(("下半场",), "second half"),
    **dict.fromkeys(("早上", "早晨", "上午", "清晨"), "morning"),
    **dict.fromkeys(("中午",), "noon"),
    **dict.fromkeys(("下午",), "afternoon"),
    **dict.fromkeys(("傍晚",), "evening"),
    **dict.fromkeys(("晚上", "夜里", "夜间", "夜晚", "半夜", "凌晨"), "night"),
}  # fmt: skip

WEEKDAYS = {"一": "monday", "二": "tuesday", "三": "wednesday", "四": "thursday",
            "五": "friday", "六": "saturday", "日": "sunday", "天": "sunday"}  # fmt: skip
HOLIDAYS = {
    **dict.fromkeys(("春节", "过年", "农历新年"), "lunar new year"),
    **dict.fromkeys(("元旦",), "new year"),
    **dict.fromkeys(("除夕", "大年三十"), "new year's eve"),
    **dict.fromkeys(("元宵节", "元宵"), "lantern festival"),
    **dict.fromkeys(("清明节", "清明"), "qingming"),
    **dict.fromkeys(("劳动节", "五一", "五一节"), "labor day"),
    **dict.fromkeys(("端午节", "端午"), "dragon boat festival"),
    **dict.fromkeys(("七夕", "七夕节"), "qixi"),
    **dict.fromkeys(("中秋节", "中秋"), "mid-autumn festival"),
    **dict.fromkeys(("国庆节", "国庆", "十一长假", "十一黄金周", "十一假期"), "national day"),
    **dict.fromkeys(("重阳节", "重阳"), "double ninth"),
    **dict.fromkeys(("圣诞节", "圣诞"), "christmas"),
    **dict.fromkeys(("平安夜",), "christmas eve"),
    **dict.fromkeys(("情人节",), "valentine's day"),
    **dict.fromkeys(("感恩节",), "thanksgiving"),
    **dict.fromkeys(("万圣节",), "halloween"),
    **dict.fromkeys(("复活节",), "easter"),
    **dict.fromkeys(("儿童节", "六一"), "children's day"),
    **dict.fromkeys(("妇女节", "三八节"), "women's day"),
    **dict.fromkeys(("双十一", "双11"), "11-11"),
    **dict.fromkeys(("双十二", "双12"), "12-12"),
    **dict.fromkeys(("618", "六一八"), "6-18"),
    **dict.fromkeys(("春运",), "spring travel rush"),
    **dict.fromkeys(("寒假",), "winter break"),
    **dict.fromkeys(("暑假",), "summer break"),
    **dict.fromkeys(("黄金周",), "golden week"),
}  # fmt: skip
SEASONS = {
    **dict.fromkeys(("春天", "春季"), "spring"),
    **dict.fromkeys(("夏天", "夏季"), "summer"),
    **dict.fromkeys(("秋天", "秋季"), "autumn"),
    **dict.fromkeys(("冬天", "冬季"), "winter"),
}  # fmt: skip

# Negation markers (multi-character first). Words that merely contain 不/没/无/非/未/别
# are removed first (NOT_NEGATION), and so are A-not-A questions (要不要, 有没有), which
# ask yes or no rather than negate.
NEGATIONS = words(
    """
    没有 不能 无法 无需 不用 不要 不可以 不会 不是 不需要 并非 未必 不 没 无 未 非 别 勿 甭 莫要
    """
)
NOT_NEGATION = words(
    """
    不错 不过 不断 不少 不久 不仅 不管 不论 不然 不但 差不多 不得不 不同 不一样 不停 要不然 不光
    不只 忍不住 了不起 对不起 不好意思 非常 非洲 除非 是非 未来 别人 别的 区别 特别 分别 类别 级别
    性别 告别 识别 辨别 鉴别 个别 差别 离别 别墅 别名 无论 无线 无人机 无聊 无数 无疑 无限 无锡
    无所谓 无辜 无敌 淹没 埋没 沉没 出没 莫斯科 莫名 没关系 毫无疑问 无印良品 非得 独一无二
    感激不尽 不客气 不错过 无所不能 不知道 不清楚 不确定 不了解
    """
)

# Tiers, plans and sizes; canonical values are shared with English.
TIER_PREFIXES = {
    "免费": "free", "试用": "trial", "基础": "basic", "标准": "standard", "专业": "pro",
    "高级": "premium", "企业": "enterprise", "旗舰": "ultimate", "个人": "personal",
    "团队": "team", "学生": "student", "家庭": "home", "教育": "education",
    "社区": "community", "商业": "business", "入门": "starter", "尊享": "deluxe",
    "豪华": "deluxe", "青春": "lite", "精简": "lite", "轻量": "lite", "终极": "ultimate",
    "开发者": "developer", "普通": "regular", "超级": "super", "黄金": "gold",
    "白金": "platinum", "钻石": "diamond", "白银": "silver", "青铜": "bronze",
    "年度": "annual", "月度": "monthly", "季度": "quarterly", "体验": "trial",
}  # fmt: skip
# What follows a tier prefix: 专业版, 高级会员, 企业套餐, 家庭账户.
TIER_SUFFIXES = words(
    """
    版本 版 会员 套餐 账号 账户 计划 方案 订阅
    """
)
TIER_WORDS = {
    "免费": "free", "大会员": "premium", "vip": "vip", "svip": "svip", "超大杯": "xl",
    "大杯": "large", "中杯": "medium", "小杯": "small", "大份": "large", "中份": "medium",
    "小份": "small", "大号": "large", "中号": "medium", "小号": "small",
}  # fmt: skip
LATIN_TIERS = {
    "pro": "pro", "max": "max", "plus": "plus", "ultra": "ultra", "mini": "mini",
    "lite": "lite", "se": "se", "air": "air", "premium": "premium", "enterprise": "enterprise",
}  # fmt: skip

# Rewrites applied first so that aliases compare equal (苹果手机 == iPhone).
ALIASES = {
    "苹果手机": "iphone", "苹果电脑": "mac", "安卓": "android", "谷歌": "google",
    "微软": "microsoft", "亚马逊": "amazon", "特斯拉": "tesla", "英伟达": "nvidia",
    "脸书": "facebook", "推特": "twitter", "油管": "youtube", "领英": "linkedin",
    "三星": "samsung", "索尼": "sony", "英特尔": "intel", "甲骨文": "oracle",
    "万里长城": "长城", "美利坚": "美国", "大不列颠": "英国", "魔都": "上海", "帝都": "北京",
    "哔哩哔哩": "b站", "阿里": "阿里巴巴", "阿里巴巴": "阿里巴巴", "阿里云": "阿里云",
    "无线网络": "wifi",
    "无线网": "wifi", "wi-fi": "wifi", "苹果公司": "苹果", "英文": "英语", "汉语": "中文",
    "普通话": "中文", "日文": "日语", "韩文": "韩语", "苹果系统": "ios", "视窗": "windows",
    "鸿蒙系统": "鸿蒙", "猫咪": "猫", "小猫": "猫", "狗狗": "狗", "小狗": "狗",
    "微信支付": "微信", "双11": "双十一", "双12": "双十二",
}  # fmt: skip

COUNTRIES = """
中国 美国 英国 法国 德国 日本 韩国 朝鲜 俄罗斯 意大利 西班牙 葡萄牙 荷兰 比利时 瑞士 瑞典 挪威
丹麦 芬兰 冰岛 爱尔兰 奥地利 波兰 捷克 匈牙利 希腊 土耳其 乌克兰 加拿大 墨西哥 巴西 阿根廷 智利
秘鲁 哥伦比亚 澳大利亚 澳洲 新西兰 印度 巴基斯坦 孟加拉 尼泊尔 斯里兰卡 泰国 越南 老挝 柬埔寨 缅甸
马来西亚 新加坡 印度尼西亚 印尼 菲律宾 蒙古 哈萨克斯坦 伊朗 伊拉克 以色列 沙特 沙特阿拉伯 阿联酋
卡塔尔 埃及 南非 尼日利亚 肯尼亚 埃塞俄比亚 摩洛哥 古巴 欧洲 亚洲 非洲 北美 南美 欧盟 台湾 香港
澳门 迪拜
"""
PROVINCES = """
北京 上海 天津 重庆 河北 山西 辽宁 吉林 黑龙江 江苏 浙江 安徽 福建 江西 山东 河南 湖北 湖南 广东
海南 四川 贵州 云南 陕西 甘肃 青海 内蒙古 广西 西藏 宁夏 新疆
"""
CITIES = """
广州 深圳 杭州 南京 苏州 成都 武汉 西安 长沙 郑州 青岛 厦门 大连 沈阳 哈尔滨 长春 济南 合肥 福州
南昌 昆明 贵阳 南宁 海口 三亚 拉萨 乌鲁木齐 兰州 西宁 银川 呼和浩特 石家庄 太原 宁波 无锡 温州
佛山 东莞 珠海 中山 惠州 汕头 桂林 丽江 大理 西双版纳 张家界 黄山 洛阳 开封 扬州 绍兴 嘉兴 常州
徐州 烟台 威海 秦皇岛 北戴河 九寨沟 峨眉山 乐山 敦煌 喀什 东京 大阪 京都 北海道 首尔 釜山 曼谷
清迈 普吉岛 河内 胡志明市 吉隆坡 巴厘岛 纽约 洛杉矶 旧金山 芝加哥 西雅图 波士顿 华盛顿 拉斯维加斯
夏威夷 伦敦 巴黎 柏林 罗马 米兰 威尼斯 马德里 巴塞罗那 阿姆斯特丹 维也纳 布拉格 莫斯科 悉尼 墨尔本
多伦多 温哥华 台北 高雄
"""
PLACES = """
长城 故宫 天安门 西湖 泰山 华山 黄山 庐山 峨眉山 兵马俑 外滩 迪士尼 环球影城 长江 黄河 珠江 富士山
埃菲尔铁塔 自由女神像 鼓浪屿 千岛湖 洱海 三峡 颐和园 布达拉宫 鸟巢
"""
COMPANIES = """
腾讯 阿里巴巴 百度 京东 拼多多 美团 字节跳动 网易 小红书 微博 知乎 b站 抖音 快手 淘宝 天猫 支付宝
微信 qq 钉钉 飞书 高德 滴滴 携程 饿了么 华为 小米 荣耀 联想 中兴 魅族 一加 大疆 vivo oppo 比亚迪
蔚来 小鹏 理想汽车 吉利 长城汽车 宁德时代 茅台 中国银行 工商银行 建设银行 农业银行 招商银行
交通银行 邮储银行 中国移动 中国联通 中国电信 国家电网 中石化 中石油 星巴克 麦当劳 肯德基 必胜客
瑞幸 喜茶 宜家 优衣库 可口可乐 百事 耐克 阿迪达斯 奔驰 宝马 奥迪 丰田 本田 大众 日产 福特 苹果
百度网盘 网易云音乐 qq音乐 酷狗 爱奇艺 优酷 腾讯视频 王者荣耀 原神 英雄联盟 鸿蒙 骁龙 麒麟
天猫精灵 小爱同学 12306 12306网站 京东物流 顺丰 中通 圆通 韵达 申通 邮政 微软 谷歌 亚马逊 特斯拉
英伟达 三星 索尼 英特尔 苹果电脑
"""
PEOPLE = """
李白 杜甫 白居易 苏轼 王维 李清照 辛弃疾 陶渊明 鲁迅 孔子 老子 孟子 庄子 韩非子 秦始皇 汉武帝
唐太宗 武则天 康熙 乾隆 诸葛亮 曹操 刘备 孙权 关羽 毛泽东 邓小平 孙中山 周恩来 马云 马化腾 雷军
任正非 刘强东 李彦宏 张一鸣 马斯克 乔布斯 比尔盖茨 巴菲特 特朗普 拜登 奥巴马 爱因斯坦 牛顿
莎士比亚 贝多芬 莫扎特 周杰伦 姚明 刘翔 梅西 c罗 科比 詹姆斯
"""
# A city implies its province or country: "河南郑州" and "郑州" name one place.
REGION_OF = {
    city: region
    for region, cities in {
        "广东": "广州 深圳 佛山 东莞 珠海 中山 惠州 汕头",
        "浙江": "杭州 宁波 温州 绍兴 嘉兴 千岛湖",
        "江苏": "南京 苏州 无锡 常州 徐州 扬州", "四川": "成都 乐山 九寨沟 峨眉山",
        "湖北": "武汉", "陕西": "西安", "湖南": "长沙 张家界", "河南": "郑州 洛阳 开封",
        "山东": "青岛 济南 烟台 威海 泰山", "福建": "厦门 福州 鼓浪屿", "辽宁": "大连 沈阳",
        "黑龙江": "哈尔滨", "吉林": "长春", "安徽": "合肥 黄山", "江西": "南昌 庐山",
        "云南": "昆明 丽江 大理 西双版纳 洱海", "贵州": "贵阳", "广西": "南宁 桂林",
        "海南": "海口 三亚", "西藏": "拉萨 布达拉宫", "新疆": "乌鲁木齐 喀什",
        "甘肃": "兰州 敦煌", "青海": "西宁", "宁夏": "银川", "内蒙古": "呼和浩特",
        "河北": "石家庄 秦皇岛 北戴河", "山西": "太原", "日本": "东京 大阪 京都 北海道 富士山",
        "韩国": "首尔 釜山", "泰国": "曼谷 清迈 普吉岛", "越南": "河内 胡志明市",
        "马来西亚": "吉隆坡", "印度尼西亚": "巴厘岛",
        "美国": "纽约 洛杉矶 旧金山 芝加哥 西雅图 波士顿 华盛顿 拉斯维加斯 夏威夷",
        "英国": "伦敦", "法国": "巴黎 埃菲尔铁塔", "德国": "柏林", "意大利": "罗马 米兰 威尼斯",
        "西班牙": "马德里 巴塞罗那", "荷兰": "阿姆斯特丹", "奥地利": "维也纳", "捷克": "布拉格",
        "俄罗斯": "莫斯科", "澳大利亚": "悉尼 墨尔本", "加拿大": "多伦多 温哥华",
        "台湾": "台北 高雄",
        "北京": "故宫 天安门 颐和园 鸟巢 长城", "上海": "外滩", "杭州": "西湖",
    }.items()
    for city in cities.split()
}  # fmt: skip

# Everyday nouns that questions swap freely ("猫为什么..." / "狗为什么...").
ANIMALS = """
猫 狗 兔子 仓鼠 鹦鹉 乌龟 金鱼 荷兰猪 红色 绿色 蓝色 黄色 橙色 紫色 粉色 棕色 黑色 白色 灰色
金色 银色
"""
LANGUAGES = """
中文 英语 日语 韩语 法语 德语 俄语 西班牙语 葡萄牙语 意大利语 阿拉伯语 粤语 文言文
"""
ENTITY_NAMES = frozenset(
    (COUNTRIES + PROVINCES + CITIES + PLACES + COMPANIES + PEOPLE + LANGUAGES + ANIMALS).split()
)

# Chinese words that contain a numeral but are not numbers (万一 = "in case").
NOT_NUMBERS = words(
    """
    万一 一些 一下 一点点 一起 一样 一定 一直 一般 一切 一旦 一致 统一 唯一 一边 一会 一向 一再
    一律 一生 一同 一流 一味 万能 百科 百货 三明治 一体 一口气 一手 二手 三思 五花八门 七上八下
    乱七八糟 一带一路 一模一样 千方百计 十字路口 一路 一时 一度 一番 一概 一方面 另一方面 一如既往
    数一数二 独一无二 千万别 千万不 千万要 千万记 千万注意 一直以来 第一时间 一旁 一面 两岸 三角
    四季 五金 一箭双雕 十足 十全十美 一心一意 三心二意 九牛一毛 一见钟情 万事如意
    """
)

# Markers of a direction: 从X到Y, X到Y, X转Y, X兑Y, X换成Y, X比Y, 把X翻译成Y.
DIRECTION_MARKERS = words(
    """
    转换成 转换为 换算成 换算为 翻译成 翻译为 兑换成 迁移到 转移到 转成 转为 换成 译成 切换到
    切换成 转到 传到 导到 发到 飞往 兑换 兑 到 至 飞 比 去 往 转
    """
)
# Words containing a marker character that are not a direction (收到, 比较, 飞机).
NOT_DIRECTION = words(
    """
    收到 找到 看到 得到 遇到 想到 做到 达到 听到 感到 受到 用到 直到 到底 到期 到账 到货 迟到 报到
    签到 周到 到处 比较 比如 比例 比赛 对比 相比 好比 无比 比特币 比亚迪 飞机 飞行 起飞 飞船 去年
    过去 去世 去除 去掉 失去 往往 以往 往年 往事 转账 转发 转让 转向 好转 运转 旋转 转换 转变 至少
    至今 甚至 以至 至于 直至 截至 冬至 夏至 兑现 来不及 到时候 到了 来往 前往
    """
)
# Characters that end a fallback direction endpoint (从公司到机场打车): verbs, particles.
# (Texts are NFKC-normalised: full-width punctuation is ASCII by then; 。 and 、 remain.)
ENDPOINT_STOPS = (
    "坐乘搭打开骑走飞去要需的怎如多几是有吗呢了用和与跟或该应能可会得再还就都也最更很太里上中内后前时"
    ",.?!;: \u3002\u3001"
)
