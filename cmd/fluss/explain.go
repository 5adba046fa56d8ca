package main

import (
	"strings"
)

// planNode is one node of a rendered plan: a heading, detail lines shown
// under it, and its children.
type planNode struct {
	head     string
	details  []string
	children []*planNode
}

// renderPlan draws EXPLAIN's lines as a tree: the scan (or lookup) at the
// root with its predicates and post-scan filter as details, its branch
// under it and the splits under the branch, each with what EXPLAIN
// ANALYZE read from it. Lines it does not recognise (a query without
// FROM, the totals of EXPLAIN ANALYZE) are printed as they are, in
// order.
func renderPlan(lines []string) string {
	var b strings.Builder
	var root, branch, last *planNode
	flush := func() {
		if root != nil {
			writeNode(&b, root, "", "")
			root, branch, last = nil, nil, nil
		}
	}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "FlussScan: "), strings.HasPrefix(l, "FlussLookup: "):
			flush()
			root = scanNode(l)
			last = root
		case root != nil && strings.HasPrefix(l, "Branch: "):
			branch = &planNode{head: l}
			root.children = append(root.children, branch)
			last = branch
		case root != nil && strings.HasPrefix(l, "PostFilter: "):
			root.details = append(root.details, l)
		case root != nil && strings.HasPrefix(l, "Split: "):
			parent := branch
			if parent == nil {
				parent = root
			}
			last = &planNode{head: l}
			parent.children = append(parent.children, last)
		case root != nil && strings.HasPrefix(l, "  ") && last != nil:
			last.details = append(last.details, strings.TrimSpace(l))
		default:
			flush()
			b.WriteString(l + "\n")
		}
	}
	flush()
	return b.String()
}

// scanNode splits the scan line "FlussScan: [db.t], Type: [Append]
// [PartitionFilter: ...] ..." into a heading naming the table and its
// scan type and one detail line per bracketed part after them.
func scanNode(line string) *planNode {
	name, rest, _ := strings.Cut(line, ": ")
	groups := brackets(rest)
	if len(groups) < 2 || !strings.Contains(rest, "Type: [") {
		return &planNode{head: line}
	}
	n := &planNode{head: name + " " + groups[0] + " (" + groups[1] + ")"}
	n.details = append(n.details, groups[2:]...)
	return n
}

// brackets returns the contents of the top-level [...] groups of s. A
// bracket inside a quoted literal of a predicate does not count.
func brackets(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '"', '`':
			i = skipQuoted(s, i)
		case '[':
			if depth == 0 {
				start = i + 1
			}
			depth++
		case ']':
			if depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				out = append(out, s[start:i])
			}
		}
	}
	return out
}

// writeNode writes n and its subtree: first prefixes n's heading, rest
// every line below it (its details and its children's lines).
func writeNode(b *strings.Builder, n *planNode, first, rest string) {
	b.WriteString(first + n.head + "\n")
	detailBar := rest + "    "
	if len(n.children) > 0 {
		detailBar = rest + "│   "
	}
	for _, d := range n.details {
		b.WriteString(detailBar + d + "\n")
	}
	for i, c := range n.children {
		if i == len(n.children)-1 {
			writeNode(b, c, rest+"└── ", rest+"    ")
		} else {
			writeNode(b, c, rest+"├── ", rest+"│   ")
		}
	}
}
