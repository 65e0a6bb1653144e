#!/usr/bin/env bash
# Regenerates Sources/BlueZSimulator/Scenario/BuiltInScenarios+Files.swift from docs/scenarios/*.json,
# so the built-in scenarios are part of the binary (no resource bundle needed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/Sources/BlueZSimulator/Scenario/BuiltInScenarios+Files.swift"
{
    echo '// The built-in scenarios, embedded so the release binary needs no resource files.'
    echo '// Each is identical to docs/scenarios/NAME.json (ScenarioTests checks it); regenerate with'
    echo '// scripts/embed-scenarios.sh after editing those files.'
    echo 'extension BuiltInScenarios {'
    echo '    static let files: [String: String] = ['
    for file in "$root"/docs/scenarios/*.json; do
        echo "        \"$(basename "$file" .json)\": #\"\"\""
        sed 's/^/        /; s/^ *$//' "$file"
        echo '        """#,'
    done
    echo '    ]'
    echo '}'
} >"$out"
