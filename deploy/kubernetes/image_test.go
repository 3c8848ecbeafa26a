package kubernetes

import (
	"bufio"
	"encoding/json"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	Cmd, Args string
	Line      int
}

// stage is one FROM … and the instructions under it.
type stage struct {
	Base, Name string
	Body       []instruction
}

// parseDockerfile splits a Dockerfile into its stages: comments and blank
// lines dropped, a trailing backslash continuing the line.
func parseDockerfile(t *testing.T, file string) []stage {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	var (
		stages []stage
		cur    string
		start  int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur == "" {
			start = n
		}
		if body, more := strings.CutSuffix(line, `\`); more {
			cur += body + " "
			continue
		}
		cmd, args, _ := strings.Cut(cur+line, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args), start}
		cur = ""
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			s := stage{Base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.Name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		require.NotEmpty(t, stages, "%s:%d: %s before the first FROM", file, n, in.Cmd)
		stages[len(stages)-1].Body = append(stages[len(stages)-1].Body, in)
	}
	require.NoError(t, sc.Err())
	return stages
}

// last returns the stage's last instruction cmd ("" when none).
func (s stage) last(cmd string) string {
	out := ""
	for _, in := range s.Body {
		if in.Cmd == cmd {
			out = in.Args
		}
	}
	return out
}

// makeVar is the value of `NAME ?= value` in the Makefile.
func makeVar(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)\s*$`).FindSubmatch(b)
	require.NotNil(t, m, "Makefile: no %s ?=", name)
	return string(m[1])
}

// TestImage: the Dockerfile builds a static binary in one stage and ships
// only it, as a non-root user, on a minimal base; `make image` tags it with
// the image every manifest runs, and every Job's pod runs as that user.
func TestImage(t *testing.T) {
	stages := parseDockerfile(t, "../../Dockerfile")
	require.GreaterOrEqual(t, len(stages), 2, "multi-stage: a build stage and the image")
	build, final := stages[0], stages[len(stages)-1]
	require.NotEmpty(t, build.Name, "the build stage is named for COPY --from")
	assert.Contains(t, build.last("RUN"), "CGO_ENABLED=0 go build", "a static binary: no libc to match at run time")
	assert.True(t, strings.HasPrefix(final.Base, "gcr.io/distroless/static") || regexp.MustCompile(`^debian:[\w.-]*slim$`).MatchString(final.Base),
		"the image's base is distroless static or debian-slim, not %s", final.Base)
	copied := false
	for _, in := range final.Body {
		require.NotEqual(t, "RUN", in.Cmd, "line %d: the image runs nothing at build time (no shell on distroless)", in.Line)
		copied = copied || in.Cmd == "COPY" && strings.HasPrefix(in.Args, "--from="+build.Name+" ")
	}
	assert.True(t, copied, "the image copies the binary from the build stage")

	user, _, _ := strings.Cut(final.last("USER"), ":")
	uid, err := strconv.ParseInt(user, 10, 64)
	require.NoError(t, err, "USER is a numeric uid, so Kubernetes' runAsNonRoot can check it")
	assert.NotZero(t, uid, "non-root")
	var entry []string
	require.NoError(t, json.Unmarshal([]byte(final.last("ENTRYPOINT")), &entry), "ENTRYPOINT in exec form")
	require.NotEmpty(t, entry)
	assert.Equal(t, "simbench", path.Base(entry[0]), "the manifests' args are simbench's: run, merge, sim …")

	image := makeVar(t, "IMAGE")
	jobs := 0
	for _, m := range loadManifests(t) {
		if m.job == nil {
			continue
		}
		jobs++
		pod := m.job.Spec.Template.Spec
		for _, c := range pod.Containers {
			assert.Equal(t, image, c.Image, "%s: the image `make image` builds", m.file)
		}
		sc := pod.SecurityContext
		require.NotNil(t, sc, "%s: a pod security context", m.file)
		require.NotNil(t, sc.RunAsUser, m.file)
		assert.Equal(t, uid, *sc.RunAsUser, "%s: the image's user", m.file)
		require.NotNil(t, sc.FSGroup, m.file)
		assert.Equal(t, uid, *sc.FSGroup, "%s: the user may write the results volume", m.file)
		assert.True(t, sc.RunAsNonRoot != nil && *sc.RunAsNonRoot, m.file)
	}
	assert.Positive(t, jobs)
}
