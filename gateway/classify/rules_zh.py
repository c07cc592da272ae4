"""Chinese rules: write intents, personal records, time-sensitive questions.

spaCy's blank `zh` pipeline segments characters only, so these are character-level
regular expressions over NFKC-normalised text (full-width punctuation is ASCII by then).
A request is marked by who asks and how: 帮我/给我/替我/请/麻烦 + action, 我要/我想 +
action, or an action verb opening the sentence. 如何/怎么/怎样 before the action make it a
question about the action (informational, cacheable) unless the user asks for help doing
it (帮我).
"""

from __future__ import annotations

import re

# Actions with side effects. Single characters that are also nouns or parts of common
# words (订 in 订单, 买 in 买家) only count after a request marker.
_ACTIONS = (
    "删除|删掉|删了|移除|清空|清除|退款|退钱|退货|退订|退票|退掉|转账|转钱|汇款|打款|转给|支付|付款|"
    "缴费|交费|充值|续费|续订|缴纳|取消|撤销|撤回|修改|更改|更新|变更|改成|改为|改一下|预订|预定|"
    "预约|订购|订票|订机票|订酒店|订房|订餐|订位|订一|订个|订张|订两|下单|购买|买一|买个|买张|"
    "发送|发给|发到|发个|发一|发邮件|发短信|发消息|发微信|转发|回复|创建|新建|添加|加入|加到|"
    "放到|放进|设置|设定|设个|设一|定个|定一|提醒|叫醒|打开|关闭|开启|关掉|关上|开一下|关一下|"
    "调高|调低|调大|调小|调到|播放|放一首|放首|放点|来一首|来首|拨打|打电话|呼叫|提交|申请|注册|"
    "注销|冻结|解冻|挂失|补办|重置|绑定|解绑|订阅|取消订阅|关注|取关|安排|预留|报名|登记|挂号|"
    "叫车|叫个车|打车|叫辆|约车|租车|租一|寄|邮寄|发货|签收|确认收货|还款|还钱|借款|提现|存入|"
    "存款|取款|兑换|领取|开通|关停|停用|启用|激活|升级|降级|同步|配对|连接|断开|锁上|锁定|解锁|"
    "分享|发布|上传|举报|投诉|退订|改签|办理|开户|销户|换绑|设为"
)
_REQUEST = (
    r"帮我|帮忙|给我|替我|为我|帮咱|请你?|麻烦你?|劳驾|能不能帮我|可以帮我|能否帮我|能帮我|"
    r"我要|我想|我想要|我需要|我得|我打算|我准备|我希望|我现在要|我现在想|马上|立刻|立即|赶紧|"
    r"快点|赶快|你(?:去|来)|给(?:我|他|她|他们|妈妈|爸爸|老板|老婆|老公|朋友|同事|客户)"
)
# Question words: before the action they make it a question about the action.
_INFO = (
    r"如何|怎么|怎样|怎么样|咋|什么|为什么|为何|是否|能否|可不可以|可以吗|吗|哪些|哪里|多久|多少|"
    r"步骤|流程|方法|办法|区别|知道|了解|请问|哪个|哪家|哪种|是不是|有没有|要不要"
)

_RECORDS = (
    "账户|账号|帐户|帐号|订单|余额|密码|支付密码|账单|帐单|信用卡|银行卡|储蓄卡|借记卡|卡|航班|"
    "机票|车票|火车票|酒店|预订|预定|预约|会员|积分|快递|包裹|物流|工资|薪水|社保|公积金|医保|"
    "贷款|房贷|车贷|额度|信用分|芝麻分|花呗|借呗|白条|话费|流量|套餐|地址|收货地址|手机号|"
    "电话号码|邮箱|购物车|日程|日历|提醒|闹钟|保单|保险|理赔|退款|发票|交易|交易记录|消费记录|"
    "账单记录|还款|信用报告|征信|个税|税|年假|假期|考勤|绩效|成绩|体检报告|病历|处方|订阅|"
    "钱包|零钱|存款|理财|基金|股票|持仓|资产|收入|支出|包裹|申请|工单|投诉|行程"
)


class ChineseRules:
    """Compiled Chinese rules; one instance per classifier."""

    def __init__(self) -> None:
        self._request_then_action = re.compile(
            rf"(?:{_REQUEST})(?:[\u4e00-\u9fff\w]{{0,6}}?)(?:{_ACTIONS}|订(?!单|阅号)|买(?!家|卖)|删)"
        )
        # An action verb opening a sentence or clause is an imperative: "取消我的订单".
        self._imperative = re.compile(
            rf"(?:^|[,;.!?。、\s])(?:请|麻烦|现在|马上|立刻|立即|赶紧|快)?(?:{_ACTIONS})"
        )
        self._info = re.compile(rf"(?:{_INFO})")
        # Text work phrased as a command ("修改这段代码", "添加注释"): the answer is text,
        # nothing happens in the world, unless a record is named as well.
        self._text_work = re.compile(
            r"代码|程序|函数|脚本|文章|句子|文字|段落|段话|句话|文本|作文|论文|简历|诗|歌词|文案|"
            r"翻译|语法|格式|表格|公式|注释|变量|数组|列表|字典|字符串|正则|SQL|sql|Excel|excel|病句|"
            r"造句"
        )
        self._record = re.compile(
            r"订单|账户|账号|帐户|帐号|机票|车票|酒店|会员|订阅|闹钟|提醒|日程|灯|空调|电视|音乐|歌曲|"
            r"音量|钱|元|块|款|信用卡|银行卡|预约|预订|快递|包裹|购物车|联系人|短信|邮件|微信|电话"
        )
        # Explicit asks for help doing it ("给我" is left out: "别人给我打电话" is not one).
        self._help_request = re.compile(r"帮我|替我|为我|帮忙|麻烦你|劳驾")
        self._info_before = re.compile(rf"(?:{_INFO})[\u4e00-\u9fff\w\s]{{0,8}}?(?:{_ACTIONS})")
        self._memory = re.compile(
            r"记住|记一下|别忘了|不要忘记|以后(?:请|都|就|叫我|称呼我)|从现在(?:起|开始)|我叫[\u4e00-\u9fffA-Za-z]|"
            r"叫我[\u4e00-\u9fffA-Za-z]|称呼我|我的名字是"
        )
        self._personal = re.compile(
            rf"(?:我的|我们的|我家的?|咱们的|我(?=(?:{_RECORDS})))(?:[\u4e00-\u9fff\w]{{0,4}}?)"
            rf"(?:{_RECORDS})|我们(?:团队|公司|部门|小组|项目|单位|学校|班级)|"
            r"我(?:还)?(?:欠|有)多少|我(?:能|可以)?(?:贷|借)多少|我的(?:钱|卡)"
        )
        # Words that tie the answer to the moment it is asked: relative days, live data
        # (prices, scores, weather, news), office holders, ages and records.
        self._time_lexicon = re.compile(
            r"今天|今日|今晚|今早|今夜|今明|明天|明日|明早|明晚|后天|大后天|昨天|昨日|昨晚|前天|现在|目前|"
            r"当前|眼下|如今|当下|此刻|最新|最近|近期|近日|近来|今年|本年|去年|明年|前年|本周|这周|"
            r"这个星期|这星期|下周|上周|下星期|上星期|本月|这个月|下个月|上个月|下月|上月|本季度|"
            r"这季度|股价|股票|汇率|天气|气温|温度多少|预报|比分|赛况|战况|新闻|头条|热搜|实时|现任|"
            r"当今|刚刚|刚才发生|几点|几号|星期几|周几|油价|房价|金价|行情|报价|价格|多少钱|涨了|跌了|"
            r"涨幅|跌幅|开盘|收盘|大盘|牛市|熊市|还活着|还在世|还在营业|营业时间|几岁|多大了|"
            r"多大年纪|下一届|下一次|下届|下一场|下一集|下一季|本届|这届|本赛季|这赛季|"
            r"排名|排行|榜单|疫情|路况|堵车|航班动态|到哪了|到哪儿了|还有票|余票|"
            r"有没有票|还开门|几点开门|几点关门|上映|首映|发布会|马上要|快要|将要|什么时候出|"
            r"世界纪录|纪录保持|记录保持|首富|人口|工资|薪资|薪水|平均收入|人均收入|市值|估值|"
            r"GDP|通胀率|利率|"
            r"利息|房贷利率|存款利率|失业率|物价|谁是.{0,6}(?:总统|主席|总理|首相|总书记|市长|省长|"
            r"州长|部长|校长|院长|董事长|总裁|CEO|ceo|首席执行官|教练|主教练|队长|冠军|掌门人|负责人|"
            r"老板|首富|世界第一|第一名)|(?:总统|主席|总理|首相|董事长|CEO|ceo|主教练|冠军)是谁|"
            r"谁(?:拥有|保持|获得了?|赢得了?|拿了?)(?:最多|最高|纪录|记录|冠军|金牌)|"
            r"最(?:多|高|大|贵|快|富|强|受欢迎|畅销|火)的(?:公司|城市|国家|球员|球队|歌手|电影|"
            r"明星|人|手机|品牌|股票|建筑|大楼|网站|应用|app|APP|游戏|节目|歌曲|专辑)"
        )

    def write(self, text: str) -> str | None:
        """Rule name when `text` (normalised) asks the assistant to act."""
        # "我叫小王" sets a name; "舅舅的女儿叫我什么" asks a question.
        if self._memory.search(text) and not self._info.search(text):
            return "zh.write.memory"
        if self._text_work.search(text) and not self._record.search(text):
            return None
        request = self._request_then_action.search(text)
        # "我想知道怎么取消" and "请看下转账时间是否选择了" are questions; with
        # 帮我/替我 the act itself is asked for ("请帮我取消订单好吗").
        if request is not None and (
            self._help_request.search(request.group()) or not self._info.search(text)
        ):
            return "zh.write.request"
        imperative = self._imperative.search(text)
        if imperative is not None and not self._info_before.search(text):
            # A sentence opening with the action is a command unless it is a question
            # about the action ("取消订阅需要多久?", "删除会怎样?").
            tail = text[imperative.end() :]
            if not self._info.search(tail) or self._help_request.search(text):
                return "zh.write.imperative"
        return None

    def personal(self, text: str) -> str | None:
        return "zh.personal.record" if self._personal.search(text) else None

    def time(self, text: str) -> str | None:
        return "zh.time.lexicon" if self._time_lexicon.search(text) else None
