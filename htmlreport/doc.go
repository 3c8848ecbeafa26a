// Package htmlreport writes the HTML report: one self-contained file that
// opens offline, with a section per comparison, load-sweep comparison or
// run — its verdict, its tables (the cells compare's text and markdown
// renderers lay out) and its PNG figures embedded as data URIs. It is
// html/template and inline CSS only: no script, no external resource.
package htmlreport
