package tinygguf

// promptWords is loadgen's text-prompt word list (loadgen/prompt.go,
// promptWords): each must be one token with its leading space. A test in
// cmd/simbench checks this copy against loadgen's real prompts.
var promptWords = [...]string{
	"the", "of", "and", "to", "in", "is", "was", "for", "that", "with", "as", "on", "by", "at", "from", "his",
	"her", "he", "it", "be", "are", "this", "or", "an", "had", "not", "but", "which", "have", "they", "you", "were",
	"their", "one", "all", "we", "can", "has", "there", "been", "if", "more", "when", "will", "would", "who", "so", "no",
	"time", "out", "up", "about", "into", "them", "some", "than", "its", "two", "then", "first", "new", "other", "what", "also",
	"only", "my", "could", "after", "over", "made", "may", "most", "many", "these", "like", "years", "such", "people", "state", "where",
	"through", "way", "each", "well", "make", "did", "back", "used", "three", "him", "your", "our", "just", "very", "me", "she",
	"any", "even", "because", "before", "same", "how", "work", "world", "life", "year", "own", "part", "four", "those", "good", "both",
	"under", "day", "last", "long", "great", "found", "down", "still", "high", "find", "must", "between", "right", "while", "take", "much",
	"never", "upon", "place", "old", "give", "came", "called", "being", "small", "man", "house", "city", "school", "group", "water", "name",
	"number", "case", "point", "home", "area", "family", "system", "country", "power", "next", "hand", "light", "line", "war", "end", "head",
	"open", "body", "land", "music", "game", "book", "road", "side", "art", "money", "team", "church", "party", "court", "form", "level",
	"set", "few", "since", "should", "does", "here", "now", "off", "get", "go", "see", "know", "say", "said", "come", "think",
	"look", "want", "use", "raise", "tell", "ask", "feel", "try", "leave", "call", "keep", "let", "begin", "seem", "help", "show",
	"hear", "play", "run", "move", "live", "believe", "bring", "happen", "write", "sit", "stand", "lose", "pay", "meet", "include", "continue",
	"learn", "change", "lead", "understand", "watch", "follow", "stop", "create", "speak", "read", "spend", "grow", "win", "offer", "remember", "love",
	"consider", "appear", "buy", "wait", "serve", "die", "send", "expect", "build", "stay", "fall", "cut", "reach", "kill", "remain", "suggest",
}

// moreWords widen the vocabulary with other common words (whole-word
// tokens), used when the vocabulary has room.
var moreWords = [...]string{
	"a", "i", "do", "us", "am", "hello", "question", "answer", "model", "token", "request", "server",
	"data", "table", "value", "result", "test", "code", "file", "page", "list", "word", "text",
	"user", "assistant", "night", "morning", "today", "week", "month", "hour", "minute", "second",
	"moment", "story", "history", "idea", "reason", "problem", "service", "interest", "information",
	"government", "company", "program", "student", "business", "issue", "member", "office", "health",
	"person", "father", "mother", "child", "children", "friend", "street", "market", "price", "job",
	"kind", "face", "door", "room", "car", "food", "air", "fire", "tree", "sun", "sea", "river",
	"mountain", "stone", "paper", "letter", "color", "red", "blue", "green", "white", "black",
	"young", "big", "little", "large", "early", "late", "important", "public", "private", "social",
	"national", "local", "real", "best", "better", "free", "full", "sure", "clear", "possible",
	"whole", "true", "strong", "hard", "easy", "simple", "short", "low", "close", "again", "always",
	"often", "together", "already", "almost", "perhaps", "however", "against", "without", "within",
	"during", "around", "among", "toward", "across", "behind", "above", "below", "near", "every",
	"another", "several", "enough", "less", "least", "half", "five", "six", "seven", "eight", "nine",
	"ten", "hundred", "thousand", "million", "order", "example", "report", "research", "science",
	"nature", "energy", "space", "earth", "plant", "animal", "language", "english", "computer",
	"network", "memory", "cache", "queue", "batch", "prefix", "output", "input", "latency",
	"throughput", "benchmark", "measure", "compare", "simulate", "engine", "slot", "prompt", "stream",
	"chunk", "third", "start", "finish", "return", "turn", "carry", "hold", "pull", "push", "draw",
	"drive", "walk", "talk", "sing", "dance", "sleep", "dream", "wake", "eat", "drink", "cook",
	"clean", "wash", "teach", "study", "paint", "travel", "visit", "choose", "decide", "agree",
	"allow", "accept", "explain", "describe", "provide", "produce", "reduce", "increase", "improve",
	"support", "develop", "receive", "require", "share", "store", "save", "load", "count", "check",
	"sound", "voice", "picture", "window", "garden", "village", "island", "ocean", "forest", "field",
	"summer", "winter", "spring", "autumn", "weather", "rain", "snow", "wind", "cloud", "star",
	"moon", "planet",
}
