package traces

import (
	"fmt"
	"slices"
	"strings"
)

// dagGraph is a dag_jsonl file's conversations, checked and expanded into
// one session per root.
type dagGraph struct {
	file       string
	convs      []dagConv
	ids        map[string]int // session_id → index in convs
	forkParent map[int]int    // FORK child → its parent conversation
	rootDelay  summary        // roots whose turn 0 has a delay
	noMax      summary        // turns without max_tokens
}

// maxDAGTurns bounds one session's turns once spawned conversations are
// copied once per spawn, so that a file cannot expand without limit.
const maxDAGTurns = 1 << 16

func (g *dagGraph) fail(c *dagConv, field, format string, args ...any) error {
	return &RowError{File: g.file, Line: c.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// expand checks the graph and returns the requests of every root's session.
func (g *dagGraph) expand(blockSize int) ([]Request, error) {
	roots, err := g.check()
	if err != nil {
		return nil, err
	}
	var reqs []Request
	var next int64
	for _, ci := range roots {
		root := &g.convs[ci]
		s := dagSession{g: g}
		if _, err := s.conv(root, -1, false); err != nil {
			return nil, err
		}
		if root.turns[0].delayMs > 0 {
			g.rootDelay.note(root.line, "")
			s.specs[0].DelayMs = 0
		}
		sess, err := BuildSession(root.id, s.specs, blockSize, &next)
		if err != nil {
			return nil, g.fail(root, "turns", "%v", err)
		}
		for i := range sess {
			sess[i].Row, sess[i].Line = len(reqs), s.lines[i]
			reqs = append(reqs, sess[i])
		}
	}
	return reqs, nil
}

// check validates branch targets, join turns, system messages and cycles,
// and returns the roots: the conversations no other one names, in file order.
func (g *dagGraph) check() ([]int, error) {
	g.forkParent = map[int]int{}
	named := make([]bool, len(g.convs))
	for ci := range g.convs {
		if err := g.checkBranches(ci, named); err != nil {
			return nil, err
		}
	}
	for ci := range g.convs {
		if err := g.checkSystem(&g.convs[ci]); err != nil {
			return nil, err
		}
	}
	state := make([]byte, len(g.convs))
	var roots []int
	for ci := range g.convs {
		if err := g.findCycle(ci, state, nil); err != nil {
			return nil, err
		}
		if !named[ci] {
			roots = append(roots, ci)
		}
	}
	return roots, nil
}

// target returns the conversation a branch names.
func (g *dagGraph) target(c *dagConv, field, id string) (int, error) {
	j, ok := g.ids[id]
	if !ok {
		return 0, g.fail(c, field, "branch target %q not declared", id)
	}
	return j, nil
}

func (g *dagGraph) checkBranches(ci int, named []bool) error {
	c := &g.convs[ci]
	for k, t := range c.turns {
		field := fmt.Sprintf("turns.%d.", k)
		for _, f := range t.forks {
			j, err := g.target(c, field+"forks", f.child)
			if err != nil {
				return err
			}
			if p, dup := g.forkParent[j]; dup {
				return g.fail(c, field+"forks", "session %q forked by both %q and %q; FORK-mode children require a single parent",
					f.child, g.convs[p].id, c.id)
			}
			if !f.background && k < len(c.turns)-1 {
				return g.fail(c, field+"forks", "session %q turn %d has foreground FORK branches but is not the last turn (use {\"child\": ..., \"background\": true})", c.id, k)
			}
			g.forkParent[j], named[j] = ci, true
		}
		for _, s := range t.spawns {
			if s.joinAt != 0 && (s.joinAt <= k || s.joinAt >= len(c.turns)) {
				return g.fail(c, field+"spawns", "join_at %d must be > %d (the spawning turn) and < %d (the turn count)", s.joinAt, k, len(c.turns))
			}
			for _, id := range s.children {
				j, err := g.target(c, field+"spawns", id)
				if err != nil {
					return err
				}
				named[j] = true
			}
		}
	}
	return nil
}

// checkSystem: a system message only where a context starts (a turn 0
// that is not a FORK child's, or any turn of an isolated conversation).
func (g *dagGraph) checkSystem(c *dagConv) error {
	if c.isolated {
		return nil
	}
	for k, t := range c.turns {
		_, forked := g.forkParent[g.ids[c.id]]
		if t.system && (k > 0 || forked) {
			return g.fail(c, fmt.Sprintf("turns.%d.messages", k),
				"session %q turn %d: non-root turns may not contain a 'system' message (it would land after the context's first)", c.id, k)
		}
	}
	return nil
}

// findCycle walks the conversations ci starts (state: 0 new, 1 on the
// path, 2 done).
func (g *dagGraph) findCycle(ci int, state []byte, path []string) error {
	c := &g.convs[ci]
	switch state[ci] {
	case 2:
		return nil
	case 1:
		return g.fail(c, "turns", "cycle detected: %s -> %s", strings.Join(path, " -> "), c.id)
	}
	state[ci] = 1
	for _, child := range c.children() {
		if err := g.findCycle(g.ids[child], state, append(path, c.id)); err != nil {
			return err
		}
	}
	state[ci] = 2
	return nil
}

// children lists the sessions c forks and spawns, in turn order.
func (c *dagConv) children() []string {
	var ids []string
	for _, t := range c.turns {
		for _, f := range t.forks {
			ids = append(ids, f.child)
		}
		for _, s := range t.spawns {
			ids = append(ids, s.children...)
		}
	}
	return ids
}

func (g *dagGraph) warnings() []Warning {
	var ws []Warning
	if s := g.rootDelay; s.count > 0 {
		ws = append(ws, Warning{g.file, s.first, fmt.Sprintf(
			"%d root conversation(s) have a delay on turn 0, first here; a session's first turn waits for nothing, so it is ignored", s.count)})
	}
	if s := g.noMax; s.count > 0 {
		ws = append(ws, Warning{g.file, s.first, fmt.Sprintf(
			"%d turn(s) without max_tokens, first here: the server's default output length (the simulator needs one and refuses them)", s.count)})
	}
	return ws
}

// dagSession lays out one root's turns: a conversation's turns in order,
// each followed by the conversations it forks and spawns.
type dagSession struct {
	g     *dagGraph
	specs []TurnSpec
	lines []int
}

// conv adds c's turns; its turn 0 waits for turn trigger (-1: none) and
// continues its context when inherit (FORK). It returns c's last turn.
func (s *dagSession) conv(c *dagConv, trigger int, inherit bool) (int, error) {
	joins := map[int][]int{}
	prev := trigger
	for k := range c.turns {
		t := &c.turns[k]
		if len(s.specs) >= maxDAGTurns {
			return 0, s.g.fail(c, "turns", "the session expands to more than %d turns (spawned conversations run once per spawn)", maxDAGTurns)
		}
		if t.maxTokens == 0 {
			s.g.noMax.note(c.line, "")
		}
		spec := TurnSpec{NewTokens: t.newTokens, OutputLength: t.maxTokens, DelayMs: t.delayMs, Fresh: c.isolated}
		if prev >= 0 {
			spec.Parents = append([]int{prev}, joins[k]...)
			slices.Sort(spec.Parents)
			ctx := prev
			spec.Context, spec.Fresh = &ctx, spec.Fresh || (k == 0 && !inherit)
		}
		idx := len(s.specs)
		s.specs, s.lines = append(s.specs, spec), append(s.lines, c.line)
		if err := s.branches(c, k, idx, joins); err != nil {
			return 0, err
		}
		prev = idx
	}
	return prev, nil
}

// branches adds the conversations turn k (session turn idx) of c forks and
// spawns, and notes in joins the turns that wait for spawned ones.
func (s *dagSession) branches(c *dagConv, k, idx int, joins map[int][]int) error {
	for _, f := range c.turns[k].forks {
		if _, err := s.conv(&s.g.convs[s.g.ids[f.child]], idx, true); err != nil {
			return err
		}
	}
	for _, sp := range c.turns[k].spawns {
		at := sp.joinAt
		if at == 0 {
			at = k + 1
		}
		for _, id := range sp.children {
			last, err := s.conv(&s.g.convs[s.g.ids[id]], idx, false)
			if err != nil {
				return err
			}
			if at < len(c.turns) {
				joins[at] = append(joins[at], last)
			}
		}
	}
	return nil
}
