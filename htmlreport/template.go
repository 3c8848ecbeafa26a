package htmlreport

import "html/template"

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1d232a; margin: 0; background: #f5f6f8; }
header { background: #1d3557; color: #fff; padding: 14px 28px; }
header h1 { margin: 0; font-size: 20px; }
header p { margin: 4px 0 0; opacity: .8; }
nav { padding: 8px 28px; background: #e8ebf0; }
nav a { margin-right: 18px; color: #1d3557; }
main { padding: 8px 28px 40px; }
section { background: #fff; border: 1px solid #d8dce3; border-radius: 6px; padding: 12px 20px 20px; margin: 18px 0; }
h2 { font-size: 18px; margin: 6px 0 8px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 10px; font-size: 13px; font-weight: 600; color: #fff; vertical-align: middle; margin-left: 8px; text-transform: uppercase; }
.badge.pass { background: #2a9d50; } .badge.breach { background: #c0392b; } .badge.incomplete { background: #d68910; } .badge.ungated { background: #6c757d; }
ul.lines { list-style: none; padding: 0; margin: 0 0 8px; color: #47505c; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 4px 0 8px; font-size: 13px; }
th, td { border: 1px solid #d8dce3; padding: 3px 8px; text-align: left; white-space: nowrap; }
th { background: #eef1f5; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
td.pass { color: #1e7b3d; font-weight: 600; } td.breach { color: #b03024; font-weight: 600; }
td.incomplete { color: #b9770e; font-weight: 600; } td.noise { color: #6c757d; font-weight: 600; }
tbody tr:nth-child(even) { background: #fafbfc; }
details summary { cursor: pointer; font-weight: 600; margin: 14px 0 6px; }
.figures { display: flex; flex-wrap: wrap; gap: 14px; }
figure { margin: 0; border: 1px solid #e1e4ea; padding: 6px; background: #fff; max-width: 100%; }
figure img { display: block; max-width: 100%; height: auto; width: 580px; }
figcaption { font-size: 12px; color: #47505c; margin-top: 4px; }
.warnings li { color: #8a5a00; }
</style>
</head>
<body>
<header><h1>{{.Title}}</h1><p>simbench report: {{len .Sections}} section{{if ne (len .Sections) 1}}s{{end}}, self-contained (figures embedded)</p></header>
{{if gt (len .Sections) 1}}<nav>{{range $i, $s := .Sections}}<a href="#s{{$i}}">{{$s.Title}}</a>{{end}}</nav>{{end}}
<main>
{{range $i, $s := .Sections}}<section id="s{{$i}}">
<h2>{{$s.Title}}{{if $s.Status}}<span class="badge {{$s.Status}}">{{$s.Status}}</span>{{end}}</h2>
<ul class="lines">{{range $s.Lines}}<li>{{.}}</li>{{end}}</ul>
{{range $s.Tables}}{{if .Folded}}<details><summary>{{.Title}}</summary>{{else}}<h3>{{.Title}}</h3>{{end}}
<div class="scroll"><table>
<thead><tr>{{range .Head}}<th{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>{{if .Folded}}</details>{{end}}
{{end}}{{if $s.Figures}}<h3>Figures</h3>
<div class="figures">{{range $s.Figures}}<figure><img src="{{.Src}}" alt="{{.Name}}"><figcaption>{{.Name}}</figcaption></figure>{{end}}</div>
{{end}}{{if $s.Warnings}}<h3>Warnings</h3>
<ul class="warnings">{{range $s.Warnings}}<li>{{.}}</li>{{end}}</ul>
{{end}}</section>
{{end}}</main>
</body>
</html>
`))
