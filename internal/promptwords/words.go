// Package promptwords is the word list simbench builds text prompts from:
// 256 common English words, each a single token (with its leading space) in
// widely used BPE and SentencePiece vocabularies. The load generator draws
// prompts from it and the tiny test model's vocabulary is built so that each
// is exactly one token, so both must use this one list.
package promptwords

// Count is the number of words.
const Count = 256

// Word returns word i.
func Word(i byte) string { return words[i] }

// All returns a copy of the list.
func All() []string { return append([]string(nil), words[:]...) }

var words = [Count]string{
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
