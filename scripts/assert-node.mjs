// Fails when an npm script runs on Node < 22 (the pinned `node` devDependency is missing).
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    `assert-node: running on Node ${process.version} (${process.execPath}); rxagent needs >= 22.12. ` +
      'node_modules/.bin/node (devDependency "node", made by its preinstall) is missing: re-run `npm ci` with scripts enabled.',
  );
  process.exit(1);
}
