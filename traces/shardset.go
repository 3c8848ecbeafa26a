package traces

import (
	"fmt"
	"strings"
)

// MissingShards refuses an incomplete set of shards: every index
// 0 … count−1 must be among byIndex's keys (given shards were given, what
// names a run or a sweep in the message).
func MissingShards(what string, byIndex map[int]string, given, count int) error {
	var missing []string
	for i := range count {
		if _, ok := byIndex[i]; !ok {
			missing = append(missing, ShardSpec{Index: i, Count: count}.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("incomplete %s: shard %s missing (given %d of %d shards)", what, strings.Join(missing, ", "), given, count)
	}
	return nil
}
