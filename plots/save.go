package plots

import (
	"bufio"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// DPI is the resolution of every PNG; with the default size it gives
// 800 × 500 pixels.
const DPI = 100

// Default size of a single-panel figure.
const (
	Width  = 8 * vg.Inch
	Height = 5 * vg.Inch
)

// margin keeps titles and tick labels off the image's edges.
const margin = vg.Inch / 12

// Palette: the reference is blue, the candidate orange, stalls red.
var (
	refColor   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	candColor  = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	stallColor = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	greyColor  = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	passColor  = color.RGBA{R: 44, G: 160, B: 44, A: 255}
)

// SeriesColor is the colour of the i-th series: reference, candidate, then
// grey.
func SeriesColor(i int) color.Color {
	switch i {
	case 0:
		return refColor
	case 1:
		return candColor
	}
	return greyColor
}

// Figure is something that draws itself on a canvas: a *plot.Plot, or
// several stacked panels.
type Figure interface {
	Draw(c draw.Canvas)
}

// Size returns the figure's size: its own for a Sized figure, else the
// default.
func Size(f Figure) (w, h vg.Length) {
	if s, ok := f.(interface{ Size() (vg.Length, vg.Length) }); ok {
		return s.Size()
	}
	return Width, Height
}

// WritePNG renders f as a PNG of w × h at DPI on a white background.
// It favours encoding speed over file size (png.BestSpeed): a figure is a
// few hundred kilobytes either way, and encoding dominates the time.
func WritePNG(out io.Writer, f Figure, w, h vg.Length) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("plots: invalid size %v × %v", w, h) // vgimg panics on these
	}
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
	legendsOutside(f).Draw(draw.Crop(draw.New(c), margin, -margin, margin, -margin))
	bw := bufio.NewWriter(out)
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(bw, c.Image()); err != nil {
		return err
	}
	return bw.Flush()
}

// SavePNG writes f to path at its size (see Size). The file is closed
// whatever happens and the first error kept.
func SavePNG(path string, f Figure) (err error) {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			err = fmt.Errorf("plots: %s: %w", path, err)
		}
	}()
	w, h := Size(f)
	return WritePNG(file, f, w, h)
}

// ErrNoData is returned for a figure that would have nothing to show.
var ErrNoData = errors.New("plots: no data to plot")

// newPlot returns a plot with a title, axis labels and a light grid.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Tick.Marker, p.Y.Tick.Marker = tidyTicks{}, tidyTicks{}
	p.Legend.Top = true
	return p
}

// stepLine is a line that holds each value until the next point (a CDF, a
// per-second rate), in colour c and width w.
func stepLine(xys plotter.XYs, c color.Color, w vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.Color = c
	l.Width = w
	return l, nil
}
