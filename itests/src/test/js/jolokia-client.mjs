// Drives a runtime's Jolokia with jolokia.js (npm) as the README shows it: read, search, exec, and a viewer's bulk
// with a forbidden item (its own error callback, the other item served), then a viewer's single forbidden exec.
// Prints one line of JSON with fixed keys, in this order; exit 0.
// Usage: node jolokia-client.mjs <url> <operator> <operator password> <viewer> <viewer password>
globalThis.window = globalThis; // jolokia.js uses window.btoa for the Authorization header
const { default: Jolokia } = await import("jolokia.js");
const [url, op, opPw, viewer, viewerPw] = process.argv.slice(2);
const operator = new Jolokia({ url, username: op, password: opPw });
const read = await operator.request({ type: "read", mbean: "io.npulifecycle:type=Runtime", attribute: "Role" });
const search = await operator.request({ type: "search", mbean: "io.npulifecycle:*" });
const exec = await operator.request({ type: "exec", mbean: "io.npulifecycle:type=Deploy", operation: "scan" });
const v = new Jolokia({ url, username: viewer, password: viewerPw });
const bulk = await new Promise((resolve) => {
    const seen = { success: [], error: [], fetchError: null };
    let pending = 2;
    const done = () => { if (--pending === 0) resolve(seen); };
    v.request([
        { type: "read", mbean: "io.npulifecycle:type=Runtime", attribute: "Role" },
        { type: "exec", mbean: "io.npulifecycle:type=Deploy", operation: "scan" }
    ], {
        success: (r, i) => { seen.success.push([i, r.value]); done(); },
        error: (r, i) => { seen.error.push([i, r.status, r.error]); done(); },
        fetchError: (r, reason) => { seen.fetchError = String(reason); resolve(seen); }
    });
});
const single = await new Promise((resolve) => {
    v.request({ type: "exec", mbean: "io.npulifecycle:type=Deploy", operation: "scan" }, {
        success: () => resolve(["success"]),
        error: (r) => resolve(["error", r.status, r.error]),
        fetchError: (r, reason) => resolve(["fetchError", String(reason)])
    });
});
console.log(JSON.stringify({
    readValue: read.value,
    searchFindsRuntime: Array.isArray(search.value) && search.value.includes("io.npulifecycle:type=Runtime"),
    execStatus: exec.status,
    bulkSuccess: bulk.success,
    bulkError: bulk.error,
    bulkFetchError: bulk.fetchError,
    single
}));
