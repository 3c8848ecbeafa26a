// Package validate runs a validation pipeline (simbench validate): a health
// check of the target, the simulator's configuration (copied or
// calibrated), the silicon runs (package realrun) and the simulated runs
// (sim.WriteRun) on one workload, interleaved when repeated, then the
// comparison with its bounds (package compare), its reports and plots, and
// one line appended to the history. The history file is read back, tabulated
// and plotted by the history functions.
package validate
