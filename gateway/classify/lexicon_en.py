"""English word lists shared by the English rules, and helpers to turn them into regexes.

Lists, not patterns: the rule modules (`write_en`, `time_en`, `personal_en`) compile them
once when a classifier is built. Everything is lower case; the rules read lower-cased,
NFKC-normalised text.
"""

from __future__ import annotations

from gateway.rules.compile import alternation, inflections

__all__ = ["alternation", "inflections"]

# --- write intent --------------------------------------------------------------------

# Verbs whose imperative acts on the world by itself: "cancel it", "book a table".
STRONG_VERBS = (
    "cancel", "refund", "transfer", "wire", "pay", "prepay", "book", "rebook", "reserve",
    "buy", "purchase", "order", "reorder", "send", "rent", "hire", "subscribe",
    "unsubscribe", "submit", "schedule", "reschedule", "remind", "wake", "renew", "redeem",
    "withdraw", "deposit", "freeze", "unfreeze", "mute", "unmute", "tweet", "retweet",
    "enroll", "enrol", "register", "sign up", "sign me up", "check in", "check me in",
    "dispute", "unsync", "sync", "pair", "unpair", "disconnect", "rsvp", "venmo",
    "forward", "notify", "dial", "call off", "unreserve", "mail",
)  # fmt: skip
# Verbs that act only on a record, device or account ("delete my account"); on anything
# else they are text work ("remove duplicates from this list") and stay cacheable.
WEAK_VERBS = (
    "delete", "remove", "erase", "wipe", "clear", "purge", "update", "change", "modify",
    "edit", "alter", "create", "make", "add", "include", "put", "place", "set", "set up",
    "setup", "reset", "restore", "revert", "return", "go back", "undo", "adjust",
    "increase", "decrease", "raise", "lower", "reduce", "boost", "dim", "brighten", "move",
    "take", "rename", "save", "mark", "archive", "assign", "arrange", "start", "stop",
    "end", "begin", "initiate", "terminate", "suspend", "share", "lock", "unlock", "block",
    "unblock", "activate", "deactivate", "enable", "disable", "open", "close", "accept",
    "approve", "reject", "decline", "pause", "resume", "skip", "upgrade", "downgrade",
    "switch", "swap", "replace", "request", "report", "file", "apply", "post", "publish",
    "upload", "turn", "shut", "restart", "reboot", "clean out", "empty", "hook up",
    "hook me up", "organize", "sort out", "secure", "connect", "link", "link up",
    "unlink", "desync", "write down", "jot down", "note down", "pencil in", "block off",
    "cross", "cross off", "check off", "tick off", "get rid of", "nuke", "blank out",
    "queue", "throw", "push", "run", "limit", "give", "scratch", "allow", "forget", "nix",
    "scrap", "ditch", "axe", "engage", "disengage", "augment", "configure", "slow",
    "establish", "keep", "abandon", "annul", "void", "revoke", "repeal", "insert",
    "warm up", "cool down", "heat up", "sound", "trash",
)  # fmt: skip
# Participles that carry the act in "I need my reservation cancelled".
STRONG_PARTICIPLES = (
    "cancelled", "canceled", "transferred", "booked", "reserved", "paid", "refunded",
    "ordered", "sent", "scheduled", "rescheduled", "delivered", "renewed", "frozen",
    "unfrozen", "deleted", "removed", "blocked", "unblocked", "locked", "unlocked",
    "changed", "updated", "reset", "activated", "deactivated", "closed", "increased",
    "decreased", "lowered", "raised", "turned on", "turned off", "turned up", "turned down",
    "set", "added", "put", "moved", "replaced", "restored", "switched", "submitted",
    "informed", "notified", "told", "alerted", "mailed", "shipped", "woken", "woken up",
    "reminded", "started", "stopped", "connected", "disconnected", "synced", "unsynced",
    "paired", "unpaired", "placed", "set up", "texted", "called", "emailed", "messaged",
    "played", "skipped",
)  # fmt: skip
# Records, devices and accounts: the objects that make a weak verb act.
ACTING_OBJECTS = (
    "account", "accounts", "acct", "subscription", "subscriptions", "membership",
    "payment", "payments", "autopay", "auto-pay", "money", "funds", "fund", "dollars",
    "bucks", "cash", "transfer", "purchase", "reservation", "reservations", "booking",
    "bookings", "appointment", "appointments", "meeting", "meetings", "meeting room",
    "calendar", "alarm", "alarms", "timer", "timers", "reminder", "reminders", "flight",
    "flights", "hotel", "hotel room", "suite", "motel", "ride", "uber", "lyft", "taxi",
    "cab", "car rental", "rental car", "email", "emails", "e-mail", "inbox", "sms",
    "text message", "voicemail", "phone call", "contact", "contacts", "playlist",
    "playlists", "song", "songs", "track", "tracks", "album", "music", "radio", "podcast",
    "next song", "volume", "sound", "light", "lights", "lamp", "lamps", "tv", "television",
    "thermostat", "temp", "temperature", "heat", "heating", "furnace", "ac", "a/c",
    "air conditioning", "air conditioner", "fan", "door", "doors", "locks", "door locks",
    "garage", "garage door", "camera", "cameras", "speaker", "sprinkler", "sprinklers",
    "oven", "dishwasher", "vacuum", "roomba", "vehicle", "engine", "settings", "setting",
    "factory settings", "factory default", "language", "accent", "voice", "speaking speed",
    "speech", "talking", "speaking", "speaking rate", "rate of speech", "whisper",
    "whisper mode", "mode", "username", "user name", "nickname", "password", "passcode",
    "pin", "pin number", "profile", "credit limit", "limit", "card", "debit card",
    "credit card", "gift card", "checks", "cheques", "checkbook", "checkbooks",
    "new checks", "loan", "claim", "insurance", "policy", "pto", "time off", "vacation",
    "leave", "refund", "replacement", "order", "orders", "package", "shipment",
    "delivery", "cart", "shopping cart", "basket", "shopping bag", "wishlist",
    "to-do list", "todo list", "to do list", "shopping list", "grocery list",
    "chore list", "list of things to do", "tweet", "tweets", "status", "location",
    "address", "coordinates", "gps", "gps coordinates", "whereabouts", "notifications",
    "notification", "subscription plan", "phone plan", "data plan", "ticket", "tickets",
    "oil change", "maintenance", "tire check", "event", "events", "invite", "invitation",
    "rsvp", "bill", "bills", "invoice", "invoices", "transaction", "transactions",
    "deposit", "direct deposit", "savings", "checking", "paycheck", "pr", "pull request",
    "issue", "repo", "repository", "server", "servers", "vm", "instance", "instances",
    "cluster", "container", "containers", "pod", "pods", "deployment", "webhook",
    "channel", "domain", "fraud", "stolen", "lost card", "unauthorized", "photos",
    "photo", "pictures", "picture", "document", "documents", "doc", "docs", "folder",
    "folders", "directory", "connection", "activity",
)  # fmt: skip
# Objects that act only when definite or possessed ("delete the file", "my files"):
# "a file" / "a list" are usually programming questions.
DEFINITE_OBJECTS = (
    "file", "files", "record", "records", "row", "rows", "table", "database", "branch",
    "commit", "user", "users", "group", "item", "items", "entry", "entries", "list",
    "message", "messages", "name", "post", "posts", "comment", "comments", "text",
    "contact", "task", "tasks", "note", "notes", "page", "site", "website", "app", "phone",
    "cell", "cell phone", "cellphone", "mobile", "device", "computer", "laptop", "car",
    "mix", "this song", "this track", "this album",
)  # fmt: skip
# Things one asks for with "I need a ...", "get me a ...": transactions.
BOOKABLE = (
    "flight", "flights", "plane ticket", "airline ticket", "train ticket", "bus ticket",
    "hotel", "hotel room", "room", "suite", "motel", "hostel", "airbnb", "lodging",
    "place to stay", "place to crash", "table", "reservation", "booking", "appointment",
    "ride", "uber", "lyft", "taxi", "cab", "car rental", "rental car", "rental", "refund",
    "replacement", "new card", "new credit card", "new debit card", "new pin",
    "new password", "alarm", "timer", "reminder", "tickets", "seat", "seats", "delivery",
    "pickup", "pick up", "wake up call", "wake-up call", "meeting room", "tow truck",
    "plumber", "mechanic", "electrician", "technician", "repairman", "locksmith",
    "doctor's appointment", "more checks", "new checks", "more checkbooks",
    "new checkbooks", "checkbooks",
)  # fmt: skip
LANGUAGES = (
    "english|spanish|french|german|italian|portuguese|russian|chinese|mandarin|cantonese|"
    "japanese|korean|arabic|hindi|dutch|swedish|norwegian|danish|finnish|polish|turkish|"
    "greek|hebrew|thai|vietnamese|indonesian|navajo|swahili|ukrainian|czech"
)

# --- personal records ----------------------------------------------------------------

# Record nouns that make "my ..." about the asker's own data ("my essay" is not one).
PERSONAL_RECORDS = (
    "account", "accounts", "acct", "order", "orders", "purchase", "purchases", "balance",
    "balances", "subscription", "subscriptions", "membership", "password", "passcode",
    "pin", "pin number", "username", "user name", "login", "profile", "bill", "bills",
    "billing", "statement", "statements", "invoice", "invoices", "receipt", "receipts",
    "payment", "payments", "transaction", "transactions", "charges", "charge", "refund",
    "credit score", "credit limit", "credit report", "credit card", "credit cards",
    "debit card", "card", "cards", "bank", "bank account", "checking", "savings", "loan",
    "loans", "mortgage", "401k", "401(k)", "ira", "pension", "paycheck", "salary",
    "paystub", "pay stub", "w2", "w-2", "tax return", "taxes", "insurance", "policy",
    "claim", "claims", "benefits", "pto", "vacation days", "sick days", "flight",
    "flights", "booking", "bookings", "reservation", "reservations", "ticket", "tickets",
    "itinerary", "appointment", "appointments", "meeting", "meetings", "calendar",
    "schedule", "reminder", "reminders", "alarm", "alarms", "to-do list", "todo list",
    "to do list", "shopping list", "grocery list", "cart", "wishlist", "package",
    "packages", "parcel", "delivery", "shipment", "tracking", "return", "phone plan",
    "data plan", "plan", "usage", "points", "rewards", "reward points", "miles",
    "phone bill", "inbox", "emails", "email", "messages", "voicemail", "contacts",
    "location", "address", "phone number", "email address", "name", "application",
    "application status", "visa application", "case", "medical records", "prescription",
    "prescriptions", "test results", "lab results", "grades", "transcript", "spending",
    "expenses", "budget", "net worth", "portfolio", "stocks", "investments", "wallet",
    "device", "devices", "car's", "routing number", "account number", "direct deposit",
    "interest rate", "apr", "minimum payment", "due date", "credit", "pay", "income",
    "history", "purchase history", "order history", "settings", "preferences",
    "subscription plan", "loyalty", "bonus", "raise",
)  # fmt: skip
OWNERS = (
    "team|company|org|organization|organisation|department|dept|firm|startup|business|"
    "store|shop|office|school|class|household|family"
)

# --- time ----------------------------------------------------------------------------

# Holders of an office or title: "who is the (current) X" changes with time.
OFFICES = (
    "president", "vice president", "vp", "prime minister", "pm", "premier", "chancellor",
    "ceo", "cfo", "cto", "coo", "chairman", "chairwoman", "chair", "chairperson", "chief",
    "head", "head coach", "coach", "manager", "captain", "governor", "lieutenant governor",
    "mayor", "senator", "senators", "congressman", "congresswoman", "representative",
    "minister", "secretary", "secretary general", "secretary-general", "speaker",
    "director", "commissioner", "king", "queen", "monarch", "emperor", "pope", "leader",
    "leaders", "chief justice", "justice", "justices", "judge", "judges",
    "attorney general", "ambassador", "owner", "owners", "host", "hosts", "anchor",
    "editor", "principal", "dean", "sheriff", "commander", "champion", "champions",
    "quarterback", "goalkeeper", "president-elect", "frontman", "lead singer", "mvp",
    "bishop", "archbishop", "presenter", "presenters", "player of the year",
    "leading scorer", "top scorer", "holder", "record holder", "richest", "oldest",
    "youngest", "tallest", "fastest", "spokesperson", "spokesman", "ruler", "dictator",
    "ayatollah", "sultan", "chief minister", "general secretary", "first lady",
    "leader of the opposition", "majority leader", "minority leader", "whip", "deputy",
    "administrator", "superintendent",
)  # fmt: skip
# Heads of superlatives that change over time ("the largest company", "tallest
# building"); natural superlatives ("the largest planet") stay put.
CHANGING_HEADS = (
    "company", "companies", "corporation", "corporations", "city", "cities", "economy",
    "economies", "country", "countries", "building", "buildings", "skyscraper",
    "skyscrapers", "stadium", "stadiums", "bridge", "bridges", "airport", "airports",
    "mall", "malls", "bank", "banks", "employer", "employers", "army", "armies",
    "military", "navy", "team", "teams", "club", "clubs", "university", "universities",
    "school", "schools", "network", "website", "websites", "app", "apps", "channel",
    "channels", "market", "markets", "producer", "producers", "exporter", "exporters",
    "importer", "importers", "consumer", "consumers", "manufacturer", "manufacturers",
    "brand", "brands", "movie", "movies", "film", "films", "album", "albums", "song",
    "songs", "contract", "contracts", "deal", "ship", "ships", "cruise ship", "plane",
    "roller coaster", "rollercoaster", "hotel", "hotels", "casino", "tower", "towers",
    "tunnel", "dam", "telescope", "computer", "supercomputer", "stock", "stocks",
    "cryptocurrency", "currency", "currencies", "state", "states", "county", "counties",
    "metropolitan", "metro", "population", "populations", "religion", "religions",
    "language", "languages", "party", "parties", "newspaper", "magazine", "game", "games",
    "video", "videos", "person", "people", "man", "woman", "athlete", "athletes",
    "player", "players", "actor", "actors", "actress", "singer", "artist", "artists",
    "band", "bands", "rapper", "youtuber", "streamer", "influencer", "billionaire",
    "billionaires", "family", "families", "franchise", "franchises", "restaurant",
    "restaurants", "chain", "chains", "retailer", "retailers", "airline", "airlines",
    "car", "cars", "phone", "phones", "show", "shows", "series", "book", "books",
    "author", "authors", "salary", "salaries", "transfer", "record", "records", "streak",
    "winning streak", "lead", "margin", "score", "attendance", "crowd", "audience",
    "following", "valuation", "ipo", "lottery", "jackpot", "prize",
)  # fmt: skip
ACHIEVEMENTS = (
    "championships", "championship", "titles", "title", "wins", "victories", "goals",
    "points", "runs", "home runs", "touchdowns", "medals", "gold medals", "trophies",
    "cups", "rings", "awards", "grammys", "grammy", "oscars", "oscar", "emmys", "emmy",
    "tonys", "nominations", "albums", "songs", "hits", "number ones", "number one hits",
    "followers", "subscribers", "views", "likes", "downloads", "streams", "members",
    "employees", "stores", "locations", "restaurants", "franchises", "users", "customers",
    "players", "episodes", "seasons", "books", "movies", "films", "children", "kids",
    "grandchildren", "wives", "husbands", "appearances", "caps", "assists", "rebounds",
    "sacks", "wickets", "centuries", "sixes", "boundaries", "hat tricks", "hat-tricks",
    "strikeouts", "saves", "stolen bases", "yards", "passing yards", "rushing yards",
    "majors", "grand slams", "slams", "world cups", "super bowls", "stanley cups",
    "pennants", "nba titles", "mvps", "mvp awards", "ballon d'or", "records", "sales",
    "copies", "votes", "seats", "delegates", "countries", "states", "times", "games",
    "matches", "races", "fights", "knockouts", "tries", "premierships", "three pointers",
    "3 pointers", "3-pointers", "dunks", "double centuries", "kills", "deaths", "cases",
    "infections", "vaccinations", "nobel prizes", "patents",
)  # fmt: skip
# Recurring events: "who won the X" without a year asks about the latest edition.
RECURRING = (
    "award", "awards", "cup", "championship", "championships", "medal", "title",
    "election", "elections", "league", "series", "bowl", "tournament", "open", "prize",
    "race", "contest", "competition", "trophy", "final", "finals", "playoffs", "playoff",
    "pennant", "primary", "primaries", "leadership", "vote", "gold", "silver", "bronze",
    "mvp", "heisman", "oscar", "oscars", "grammy", "grammys", "emmy", "emmys", "tony",
    "ballon d'or", "season", "game", "match", "grand prix", "marathon", "derby",
    "classic", "masters", "slam", "belt", "crown", "idol", "got talent", "bake off",
    "draft", "pick", "voice", "bachelor", "bachelorette", "survivor", "big brother",
    "nobel", "pulitzer", "booker", "caucus", "referendum", "super bowl", "world series",
    "stanley cup", "world cup", "euro", "eurovision", "olympics", "gold medal",
)  # fmt: skip
# Figures that move: prices, pay, populations, rates, rankings.
FIGURES = (
    "population", "populations", "salary", "salaries", "wage", "wages", "minimum wage",
    "net worth", "market cap", "market capitalization", "valuation", "revenue", "revenues",
    "profits", "gdp", "gdp per capita", "inflation rate", "unemployment rate",
    "poverty rate", "crime rate", "interest rate", "interest rates", "mortgage rate",
    "mortgage rates", "exchange rate", "exchange rates", "tax rate", "life expectancy",
    "birth rate", "death rate", "literacy rate", "mortality rate", "median income",
    "average salary", "average income", "average price", "average cost", "average age",
    "average height", "average weight", "average temperature", "average lifespan",
    "average rent", "average wage", "average pay", "average house price", "per capita",
    "cost of living", "tuition", "enrollment", "ranking", "rankings", "standings",
    "approval rating", "polls", "national debt", "stock price", "share price", "price",
    "prices", "cost", "costs", "fee", "fees", "fare", "fares", "rent", "worth",
    "market value", "box office", "ratings", "viewership", "subscribers", "followers",
    "headcount", "number of", "total number", "percentage of the", "percent of the",
    "market share", "world record", "leaderboard", "top 10", "top ten", "top 5", "top five",
    "top 20", "top 100", "number one", "#1", "no. 1", "best seller", "bestseller",
)  # fmt: skip
