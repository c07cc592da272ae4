"""English word lists for the slot extractors (data only; patterns are built per
extractor instance)."""

from __future__ import annotations

from gateway.entities.text import phrases, words

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
# Month names that are also ordinary words: months only when capitalised mid-sentence or
# next to a day number ("May 1", "in May"; not "may I", "march on", "august body").
AMBIGUOUS_MONTHS = frozenset({"may", "march", "august", "jan", "mar", "jun", "dec", "sep"})
WEEKDAYS = {
    "monday": "monday", "tuesday": "tuesday", "wednesday": "wednesday",
    "thursday": "thursday", "friday": "friday", "saturday": "saturday", "sunday": "sunday",
    "mondays": "monday", "tuesdays": "tuesday", "wednesdays": "wednesday",
    "thursdays": "thursday", "fridays": "friday", "saturdays": "saturday",
    "sundays": "sunday", "weekend": "weekend", "weekends": "weekend", "weekday": "weekday",
    "weekdays": "weekday",
}  # fmt: skip
HOLIDAYS = {
    "christmas eve": "christmas eve", "christmas day": "christmas", "christmas": "christmas",
    "xmas": "christmas", "new year's eve": "new year's eve", "new years eve": "new year's eve",
    "new year's day": "new year", "new year's": "new year", "new years day": "new year",
    "new year": "new year", "thanksgiving": "thanksgiving", "easter": "easter",
    "halloween": "halloween", "valentine's day": "valentine's day",
    "valentines day": "valentine's day", "independence day": "independence day",
    "fourth of july": "07-04", "labor day": "labor day", "labour day": "labor day",
    "memorial day": "memorial day", "black friday": "black friday",
    "cyber monday": "cyber monday", "mother's day": "mother's day",
    "mothers day": "mother's day", "father's day": "father's day",
    "fathers day": "father's day", "good friday": "good friday", "ramadan": "ramadan",
    "diwali": "diwali", "hanukkah": "hanukkah", "chinese new year": "lunar new year",
    "lunar new year": "lunar new year", "spring festival": "lunar new year",
    "boxing day": "boxing day", "st. patrick's day": "st patrick's day",
    "st patrick's day": "st patrick's day", "veterans day": "veterans day",
    "martin luther king day": "mlk day", "mlk day": "mlk day", "presidents day": "presidents day",
    "presidents' day": "presidents day", "canada day": "canada day",
}  # fmt: skip
SEASONS = {"spring": "spring", "summer": "summer", "autumn": "autumn", "winter": "winter"}

# Relative time words; the canonical value is what must be equal on both sides.
TIME_WORDS = {
    "today": "today", "tonight": "tonight", "tomorrow": "tomorrow",
    "yesterday": "yesterday", "now": "now", "right now": "now", "currently": "now",
    "at the moment": "now", "nowadays": "now", "these days": "now", "at present": "now",
    "this moment": "now", "day after tomorrow": "day after tomorrow",
    "day before yesterday": "day before yesterday", "recently": "recently",
    "lately": "recently", "so far this year": "this year", "ytd": "this year",
    "year to date": "this year",
}  # fmt: skip
# "now" in these says nothing about when the answer holds.
NOT_TIME_WORDS = phrases(
    """
    now that,  by now,  for now,  until now,  up to now,  upto now,  till now,  from now on
    """
)
# "this/next/last/coming/past" + one of these is one relative time word.
RELATIVE_MODIFIERS = {
    "this": "this", "current": "this", "next": "next", "coming": "next",
    "upcoming": "next", "last": "last", "past": "last", "previous": "last",
}  # fmt: skip
RELATIVE_NOUNS = words(
    """
    week weekend month year morning afternoon evening night quarter season semester decade spring
    summer fall autumn winter monday tuesday wednesday thursday friday saturday sunday
    """
)
DAY_PARTS = ("morning", "afternoon", "evening", "night")

NEGATIONS = words(
    """
    not no never without cannot nor none nothing nobody neither unable dont doesnt didnt cant wont
    isnt arent wasnt werent shouldnt wouldnt couldnt havent hasnt aint
    """
)

# No negated claim in these: "why or why not", "I don't know how to...".
NOT_NEGATION = phrases(
    """
    or not,  why not,  if not,  not only,  no matter,  no doubt,  no one else,  don't know,
    do not know,  dont know,  not sure,  i'm not sure
    """
)

# Product tiers, plans, editions and sizes (canonical values shared with Chinese).
TIERS = {
    "free": "free", "freemium": "free", "trial": "trial", "basic": "basic",
    "standard": "standard", "pro": "pro", "professional": "pro", "plus": "plus",
    "premium": "premium", "enterprise": "enterprise", "business": "business",
    "team": "team", "teams": "team", "personal": "personal", "individual": "personal",
    "student": "student", "education": "education", "edu": "education", "lite": "lite",
    "max": "max", "mini": "mini", "ultra": "ultra", "family": "family",
    "home": "home", "starter": "starter", "essential": "essential", "essentials": "essential",
    "advanced": "advanced", "ultimate": "ultimate", "developer": "developer",
    "community": "community", "unlimited": "unlimited", "air": "air", "se": "se",
    "deluxe": "deluxe", "platinum": "platinum", "gold": "gold", "silver": "silver",
    "bronze": "bronze", "vip": "vip", "growth": "growth", "scale": "scale",
}  # fmt: skip
# Tier words that are common English words count only when capitalised mid-sentence
# ("iPhone 15 Pro Max"), right after a number ("14 pro"), or before a plan word
# ("the team plan"). These count anywhere:
STRONG_TIERS = frozenset({"premium", "enterprise", "freemium"})
TIER_CONTEXTS = words(
    """
    plan plans tier tiers edition editions version versions subscription subscriptions account
    accounts license licence licenses package packages membership memberships level option model
    bundle pass seat seats trial user users member members mode
    """
)
# Sizes count after an article or number: "a large latte" vs "a small latte".
SIZES = {
    "small": "small", "medium": "medium", "large": "large", "big": "large",
    "extra large": "xl", "xl": "xl", "xxl": "xxl", "king size": "king", "queen size": "queen",
    "venti": "venti", "grande": "grande",
}  # fmt: skip
# "free" inside these is not a price tier.
FREE_IDIOMS = phrases(
    """
    feel free,  free time,  free will,  free speech,  free from,  free of,  free up,  freed,
    set free,  break free,  free fall,  free kick,  free throw,  free radical,  free radicals,
    free-range,  free range,  free weights
    """
)

# Phrases rewritten to one canonical form before anything else, so "United States" and
# "US" and "America" compare equal. Case-sensitive forms are in CASED_ALIASES.
ALIASES = {
    "united states of america": "usa", "united states": "usa", "america": "usa",
    "american": "usa", "americans": "usa", "indians": "india", "canadians": "canada",
    "mexicans": "mexico", "koreans": "korea", "russians": "russia", "germans": "germany",
    "italians": "italy", "brazilians": "brazil", "australians": "australia",
    "filipino": "philippines", "filipinos": "philippines", "pakistani": "pakistan",
    "pakistanis": "pakistan", "israeli": "israel", "israelis": "israel", "iranian": "iran",
    "ukrainian": "ukraine", "polish": "poland", "norwegian": "norway", "danish": "denmark",
    "finnish": "finland", "nigerian": "nigeria", "kenyan": "kenya", "u.s.a.": "usa",
    "u.s.a": "usa", "u.s.": "usa",
    "united kingdom": "uk", "great britain": "uk", "britain": "uk", "british": "uk",
    "u.k.": "uk", "new york city": "new york", "nyc": "new york",
    "two-factor authentication": "2fa", "two factor authentication": "2fa",
    "2-factor authentication": "2fa", "two-factor auth": "2fa", "two-step verification": "2fa",
    "two step verification": "2fa", "multi-factor authentication": "mfa",
    "postgres": "postgresql", "k8s": "kubernetes",
    "visual studio code": "vscode", "vs code": "vscode", "mac os": "macos", "os x": "macos",
    "osx": "macos", "wi-fi": "wifi", "wi fi": "wifi", "e-mail": "email",
    "chinese": "china", "japanese": "japan", "french": "france", "german": "germany",
    "italian": "italy", "spanish": "spain", "mexican": "mexico", "canadian": "canada",
    "indian": "india", "korean": "korea", "russian": "russia", "brazilian": "brazil",
    "australian": "australia", "vietnamese": "vietnam", "thai": "thailand",
    "dutch": "netherlands", "swiss": "switzerland", "swedish": "sweden", "greek": "greece",
    "turkish": "turkey", "portuguese": "portugal", "irish": "ireland",
    "egyptian": "egypt", "european": "europe", "asian": "asia", "african": "africa",
    "gmail's": "gmail", "chrome's": "chrome",
    # Currency names: a currency, not a country ("US dollar" is not about the USA).
    "usa dollar": "usd", "usa dollars": "usd", "us dollar": "usd", "us dollars": "usd",
    "american dollar": "usd", "american dollars": "usd", "canadian dollar": "cad",
    "canadian dollars": "cad", "australian dollar": "aud", "australian dollars": "aud",
    "hong kong dollar": "hkd", "hong kong dollars": "hkd", "japanese yen": "jpy",
    "chinese yuan": "cny", "british pound": "gbp", "british pounds": "gbp",
    "uk pound": "gbp", "uk pounds": "gbp", "pound sterling": "gbp", "indian rupee": "inr",
    "indian rupees": "inr", "swiss franc": "chf", "swiss francs": "chf",
    "korean won": "krw", "singapore dollar": "sgd", "singapore dollars": "sgd",
}  # fmt: skip
CASED_ALIASES = {"US": "usa", "USA": "usa", "UK": "uk", "U.S.": "usa", "U.K.": "uk"}

# Lower-case names worth catching when a user does not capitalise ("learn python fast"
# vs "learn rust fast"). Capitalised names are caught by spaCy and capitalisation.
# Names, plus a few everyday nouns that questions swap freely while their embeddings
# barely move ("Why is my cat not eating?" / "...my dog..."; breakfast / dinner; red /
# green).
ENTITY_NAMES = frozenset(
    words(
        """
        python java javascript typescript rust ruby php perl kotlin scala haskell c++ c# elixir
        erlang clojure lua julia matlab fortran cobol objective-c bash powershell zsh sql mysql
        postgresql sqlite mongodb redis cassandra elasticsearch mariadb dynamodb firebase supabase
        docker kubernetes podman terraform ansible jenkins linux ubuntu debian fedora centos
        windows macos ios ipados android chromeos unix freebsd aws azure gcp heroku vercel netlify
        cloudflare digitalocean vue svelte django fastapi laravel nextjs next.js node.js nodejs
        deno npm yarn pip conda pandas numpy scipy tensorflow pytorch keras sklearn scikit-learn
        opencv powerpoint onedrive sharepoint photoshop illustrator figma canva trello jira
        confluence github gitlab bitbucket git vscode vim emacs intellij pycharm xcode chrome
        firefox netflix spotify youtube tiktok instagram facebook whatsapp telegram wechat twitter
        reddit linkedin pinterest snapchat amazon ebay paypal venmo zelle uber lyft airbnb tesla
        nvidia intel amd qualcomm samsung sony huawei xiaomi oppo oneplus apple google microsoft
        ibm dell lenovo asus acer openai chatgpt gpt claude gemini llama copilot iphone ipad
        macbook imac airpods alexa siri playstation ps5 xbox nintendo gmail dropbox wordpress
        shopify salesforce hubspot ethereum mastercard amex costco walmart ikea starbucks
        mcdonald's mcdonalds kfc domino's dominos france germany italy spain portugal uk usa
        canada mexico brazil argentina chile peru colombia china japan korea india pakistan
        bangladesh vietnam thailand indonesia malaysia singapore philippines australia zealand
        russia ukraine poland netherlands belgium switzerland austria sweden norway denmark
        finland ireland greece turkey egypt israel iran iraq saudi dubai qatar nigeria kenya
        ethiopia morocco europe asia africa antarctica london paris berlin madrid rome milan
        barcelona lisbon amsterdam vienna prague dublin tokyo osaka kyoto seoul beijing shanghai
        shenzhen guangzhou chengdu hangzhou hong kong taipei bangkok hanoi delhi mumbai bangalore
        sydney melbourne toronto vancouver montreal chicago boston seattle denver austin miami
        atlanta dallas houston phoenix portland detroit philadelphia washington california texas
        florida cat cats kitten kittens dog dogs puppy puppies horse horses rabbit rabbits hamster
        hamsters parrot parrots snake snakes turtle turtles tortoise goldfish ferret ferrets
        guinea pig cow cows pig pigs goat goats sheep chicken chickens duck ducks red green blue
        yellow orange purple violet pink brown black white gray grey silver gold breakfast lunch
        dinner brunch
        """
    )
)

# Capitalised words that are not names: sentence furniture, pronouns, greetings.
NOT_NAMES = frozenset(
    words(
        """
        i i'm i've i'd i'll ok okay hi hello hey please thanks thank yes no what which who whom
        whose when where why how is are was were do does did can could should would will shall may
        might must the a an and or but if then so my your our their his her its this that these
        those it they we you he she me us them there here also just like explain describe tell
        give show list write summarize compare calculate convert translate recommend suggest plan
        find help make create define name generate provide note answer question q a.m. p.m. am pm
        etc vs faq tl;dr
        """
    )
)

# Generic heads of names: "Jaipur city" and "Jaipur", "Harvard University" and "Harvard".
GENERIC_NAME_WORDS = frozenset(
    words(
        """
        city town state country province county district region river lake mountain mountains
        mount island islands company inc ltd llc corp corporation group university college school
        app application language desert airport street road avenue park building tower bridge
        station exam test program programme platform software website site service services
        government national international official
        """
    )
)

STOPWORDS = frozenset(
    words(
        """
        a an the of and or to in on at by for with from into onto as is are was were be been being
        my your our their his her its this that these those some any s 's de la
        """
    )
)

# Verbs after which "X to Y" is a direction ("convert X to Y", "switch X to Y").
DIRECTION_VERBS = words(
    """
    convert converting converts converted translate translating translated change changing switch
    switching move moving transfer transferring migrate migrating port porting export exporting
    import importing exchange exchanging swap upgrade upgrading downgrade downgrading send sending
    cast casting turn map mapping copy copying sync syncing redirect forward fly flying drive
    driving travel travelling traveling ship shipping wire rate
    """
)
# Words that end a direction endpoint ("from London to Tokyo by train").
ENDPOINT_STOPS = words(
    """
    and or for with in on at by using via without is are was were do does did if when while so
    because but please than to into from take takes cost costs usually typically that which who
    how what should can could would will it quickly fast safely easily online possible without
    after before during per each every
    """
)
COMPARATIVE_HEADS = words(
    """
    is are was were be does do did whether if why how which what makes make think
    """
)
