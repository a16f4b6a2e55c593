// Where the controller finds the programs it runs besides itself (the agent
// it pushes, the MPI probes it hands to mpirun), wherever it was started
// from: the build tree keeps them all in one directory; an install (make
// install, the .deb) puts the controller in <prefix>/bin and the others in
// <prefix>/lib/clustercheck, out of PATH, since nobody runs them by hand.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace cc {

// <prefix>/lib/clustercheck, relative to <prefix>. CMakeLists.txt installs
// there; this is the one place the controller learns it.
inline constexpr char kInstalledHelperDir[] = "lib/clustercheck";

// The directories to look in for a helper, best first, given the directory
// of the running controller: that directory itself (build tree, or a
// hand-made copy of all programs side by side), then, when it is a bin/,
// its sibling lib/clustercheck.
std::vector<std::string> HelperDirectories(const std::string& controller_dir);

// The path of helper `name`: the first of HelperDirectories where
// `exists(path)` holds. When the helper is nowhere, the path where it
// should be, so that the caller's "no such file" names it: in
// lib/clustercheck when that directory exists (an install that lost a
// file), else beside the controller.
std::string HelperPath(const std::string& controller_dir, const std::string& name,
                       const std::function<bool(const std::string&)>& exists);

// The directory of the running executable ("" when unknown).
std::string SelfDirectory();

// The path of a program the controller runs besides itself
// ("clustercheck-agent", "clustercheck-mpi-probe") for this controller:
// HelperPath from SelfDirectory, checking the file system.
std::string HelperProgram(const std::string& name);

}  // namespace cc
