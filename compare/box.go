package compare

import (
	"io"
	"strings"
)

// box renders a table the way AIPerf's console exporter (rich, HEAVY_HEAD)
// does: a heavy header, a light body, the leading label columns aligned
// left and the numbers right.
type box struct {
	headers []string
	rows    [][]string
	left    int // leading columns aligned left (at least 1)
}

func (b *box) widths() []int {
	w := make([]int, len(b.headers))
	for _, row := range append([][]string{b.headers}, b.rows...) {
		for i, c := range row {
			w[i] = max(w[i], runeLen(c))
		}
	}
	return w
}

func (b *box) write(w io.Writer) error {
	ws := b.widths()
	var sb strings.Builder
	rule(&sb, ws, "┏", "┳", "┓", "━")
	line(&sb, ws, b.headers, "┃", len(ws))
	rule(&sb, ws, "┡", "╇", "┩", "━")
	for _, r := range b.rows {
		line(&sb, ws, r, "│", max(b.left, 1))
	}
	rule(&sb, ws, "└", "┴", "┘", "─")
	_, err := io.WriteString(w, sb.String())
	return err
}

func rule(sb *strings.Builder, ws []int, left, mid, right, fill string) {
	sb.WriteString(left)
	for i, w := range ws {
		if i > 0 {
			sb.WriteString(mid)
		}
		sb.WriteString(strings.Repeat(fill, w+2))
	}
	sb.WriteString(right + "\n")
}

func line(sb *strings.Builder, ws []int, cells []string, sep string, left int) {
	sb.WriteString(sep)
	for i, w := range ws {
		if i > 0 {
			sb.WriteString(sep)
		}
		c := cells[i]
		pad := strings.Repeat(" ", w-runeLen(c))
		if i < left {
			sb.WriteString(" " + c + pad + " ")
		} else {
			sb.WriteString(" " + pad + c + " ")
		}
	}
	sb.WriteString(sep + "\n")
}

// plain renders aligned columns without borders, indented by two spaces.
// align has one letter per column: 'l' aligns it left, anything else right.
func plain(w io.Writer, rows [][]string, align string) error {
	if len(rows) == 0 {
		return nil
	}
	ws := (&box{headers: rows[0], rows: rows[1:]}).widths()
	var sb strings.Builder
	for _, r := range rows {
		var ln strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", ws[i]-runeLen(c))
			if i < len(align) && align[i] == 'l' {
				ln.WriteString("  " + c + pad)
			} else {
				ln.WriteString("  " + pad + c)
			}
		}
		sb.WriteString(strings.TrimRight(ln.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
