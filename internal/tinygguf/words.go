package tinygguf

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
