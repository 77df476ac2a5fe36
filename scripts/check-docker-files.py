#!/usr/bin/env python3
"""Checks that docker/ names only things that exist, since Docker cannot run here.

Usage: scripts/check-docker-files.py KINDLING_BINARY

- every path the Dockerfile COPYs from the build context exists and .dockerignore keeps it;
- the HEALTHCHECK runs a `kindling` subcommand that exists, against the exposed port;
- every flag the Dockerfile and compose.yaml pass to `kindling serve` is in `kindling serve --help`;
- the EXPOSEd port is the one `serve --port` gets, the one compose publishes, the one
  Prometheus scrapes and the one KINDLING_URL names;
- every file compose mounts or builds from exists, and every secret it uses is defined;
- Prometheus reads its bearer token from a secret compose gives it;
- compose.cluster.yaml: the NATS servers route to each other with JetStream on named volumes,
  each reads a mounted config that sets JetStream's sync_interval to always, and each Kindling
  node names every one of them in --cluster, with a node id of its own and the same rules file.
Needs PyYAML.
"""
import fnmatch
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCKER = ROOT / "docker"
problems = []


def problem(text):
    problems.append(text)


def dockerfile_instructions(path):
    """(instruction, arguments) pairs, with continuation lines joined and comments dropped."""
    lines, current = [], ""
    for raw in path.read_text().splitlines():
        stripped = raw.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        current += " " + stripped.rstrip("\\").strip() if current else stripped.rstrip("\\").strip()
        if not stripped.endswith("\\"):
            lines.append(current)
            current = ""
    pairs = []
    for line in lines:
        name, _, rest = line.partition(" ")
        pairs.append((name.upper(), rest.strip()))
    return pairs


def exec_form(text):
    """A JSON exec-form command as a list, else the shell form split into words."""
    text = text.strip()
    if text.startswith("["):
        return json.loads(text)
    return shlex.split(text)


def serve_flags(binary):
    out = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out))


def check_serve_arguments(where, arguments, flags):
    if not arguments or arguments[0] != "serve":
        problem(f"{where}: the command is not `kindling serve`: {arguments}")
        return None
    port = None
    for index, word in enumerate(arguments):
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            if name not in flags:
                problem(f"{where}: `kindling serve` has no flag {name}")
            if name == "--port":
                port = int(word.split("=", 1)[1]) if "=" in word else int(arguments[index + 1])
    if port is None:
        problem(f"{where}: no --port given (the default is 9000, but say it where EXPOSE can be compared)")
    return port


def check_cluster_compose(flags, exposed):
    """compose.cluster.yaml: three NATS servers in one JetStream cluster, Kindling nodes on them."""
    where = "compose.cluster.yaml"
    compose = yaml.safe_load((DOCKER / "compose.cluster.yaml").read_text())
    services = compose.get("services", {})
    volumes = set((compose.get("volumes") or {}).keys())
    nats = {name: service for name, service in services.items() if name.startswith("nats-")}
    nodes = {name: service for name, service in services.items() if name.startswith("kindling-")}
    if len(nats) != 3 or len(nodes) != 3:
        problem(f"{where}: expected services nats-1…3 and kindling-1…3, found {sorted(services)}")
        return

    def option(words, name):
        return words[words.index(name) + 1] if name in words and words.index(name) + 1 < len(words) else None

    def host_port(url, scheme):
        match = re.fullmatch(rf"{scheme}://([^:/]+):(\d+)", url or "")
        return (match.group(1), int(match.group(2))) if match else None

    cluster_names, route_ports = set(), {}
    for name, service in nats.items():
        words = service.get("command", [])
        if "--jetstream" not in words and "-js" not in words:
            problem(f"{where}: {name} runs without --jetstream")
        if option(words, "--name") != name:
            problem(f"{where}: {name} is not named {name} (--name), so JetStream's peers would not match the service")
        store = option(words, "--store_dir")
        mounted = {str(v).split(":", 1)[1].split(":")[0]: str(v).split(":", 1)[0] for v in service.get("volumes", []) if ":" in str(v)}
        if store not in mounted or mounted[store] not in volumes:
            problem(f"{where}: {name} stores JetStream in {store}, which is not a named volume it mounts")
        config = option(words, "--config")
        files = {str(v).split(":")[1]: str(v).split(":")[0] for v in service.get("volumes", []) if str(v).startswith("./")}
        if config not in files:
            problem(f"{where}: {name} reads no mounted --config, so nothing sets JetStream's sync_interval")
        elif not re.search(r"^\s*sync_interval\s*:\s*always\s*$", (DOCKER / files[config]).read_text(), re.MULTILINE):
            problem(f"{where}: {name} reads {files[config]}, which does not set sync_interval: always (acknowledged would not mean fsynced)")
        cluster_names.add(option(words, "--cluster_name"))
        listen = host_port(option(words, "--cluster"), "nats")
        if listen is None:
            problem(f"{where}: {name} has no --cluster nats://host:port to listen for routes on")
        else:
            route_ports[name] = listen[1]
    if len(cluster_names) != 1 or None in cluster_names:
        problem(f"{where}: the NATS servers must share one --cluster_name, found {cluster_names}")
    for name, service in nats.items():
        routes = [host_port(url, "nats") for url in (option(service.get("command", []), "--routes") or "").split(",")]
        expected = {(other, route_ports.get(other)) for other in nats if other != name}
        if set(routes) != expected:
            problem(f"{where}: {name} routes to {routes}, expected the other two NATS servers {sorted(expected)}")

    node_ids, published, rules = set(), set(), set()
    for name, service in nodes.items():
        words = service.get("command", [])
        port = check_serve_arguments(f"{where} {name} command", words, flags)
        if port != exposed:
            problem(f"{where}: {name} serves port {port}, the image EXPOSEs {exposed}")
        if "--data-dir" in words:
            problem(f"{where}: {name} passes --data-dir, which cluster mode ignores")
        urls = [host_port(url, "nats") for url in (option(words, "--cluster") or "").split(",")]
        if sorted(u for u in urls if u) != sorted((other, 4222) for other in nats):
            problem(f"{where}: {name} --cluster names {urls}, expected every NATS service on 4222")
        node_id = option(words, "--node-id")
        if not node_id or node_id in node_ids or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", node_id):
            problem(f"{where}: {name} needs a unique --node-id of letters, digits, '-' and '_', has {node_id!r}")
        node_ids.add(node_id)
        rules.add(option(words, "--rules"))
        for mapping in service.get("ports", []):
            host, _, container = str(mapping).rpartition(":")
            if int(container.split("/")[0]) != exposed:
                problem(f"{where}: {name} publishes container port {container}, the node serves {exposed}")
            if host in published:
                problem(f"{where}: {name} publishes host port {host} twice")
            published.add(host)
        for volume in service.get("volumes", []):
            source = str(volume).split(":", 1)[0]
            if source.startswith((".", "/")) and not (DOCKER / source).exists():
                problem(f"{where}: {name} mounts {source}, which does not exist")
        build = service.get("build", {})
        if build and not ((DOCKER / build.get("context", ".")).resolve() / build.get("dockerfile", "Dockerfile")).is_file():
            problem(f"{where}: {name} builds from {build}, which has no Dockerfile")
        needed = {other for other in nats}
        if set(service.get("depends_on", {})) != needed:
            problem(f"{where}: {name} should wait for every NATS server, depends on {sorted(service.get('depends_on', {}))}")
        if "KINDLING_ADMIN_SECRET" not in service.get("environment", {}):
            problem(f"{where}: {name} has no KINDLING_ADMIN_SECRET (off loopback a node needs a credential to verify)")
    if len(rules) != 1 or None in rules:
        problem(f"{where}: every node must serve the same --rules file, found {rules}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/check-docker-files.py KINDLING_BINARY")
    binary = sys.argv[1]
    flags = serve_flags(binary)
    instructions = dockerfile_instructions(DOCKER / "Dockerfile")

    # COPY sources (from the build context, the repository root; not --from=stage copies), none
    # of them left out of the context by .dockerignore.
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip() and not line.startswith("#")]
    stages = 0
    for name, rest in instructions:
        if name == "FROM":
            stages += 1
        if name != "COPY":
            continue
        words = shlex.split(rest)
        if any(word.startswith("--from") for word in words):
            continue
        sources = [word for word in words if not word.startswith("--")][:-1]
        for source in sources:
            if not (ROOT / source).exists():
                problem(f"Dockerfile: COPY {source}: no such file in the repository")
            parts = Path(source).parts
            for pattern in ignored:
                if any(fnmatch.fnmatch("/".join(parts[: n + 1]), pattern.lstrip("/")) for n in range(len(parts))):
                    problem(f"Dockerfile: COPY {source}: .dockerignore leaves it out of the build context ({pattern})")
    if stages < 2:
        problem("Dockerfile: expected a build stage and a runtime stage")

    # The runtime stage: EXPOSE, ENV KINDLING_URL, HEALTHCHECK, ENTRYPOINT + CMD.
    runtime = instructions[max(i for i, (n, _) in enumerate(instructions) if n == "FROM"):]
    values = {}
    for name, rest in runtime:
        values.setdefault(name, []).append(rest)
    exposed = [int(port.split("/")[0]) for rest in values.get("EXPOSE", []) for port in rest.split()]
    if len(exposed) != 1:
        problem(f"Dockerfile: expected one EXPOSEd port, found {exposed}")
    exposed = exposed[0] if exposed else None
    if "USER" not in values or values["USER"][-1] in ("root", "0"):
        problem("Dockerfile: the runtime stage must run as a user other than root")
    if "/data" not in " ".join(values.get("VOLUME", [])):
        problem("Dockerfile: no VOLUME /data")
    entrypoint = exec_form(values.get("ENTRYPOINT", ["[]"])[-1])
    if entrypoint != ["kindling"]:
        problem(f"Dockerfile: ENTRYPOINT should be [\"kindling\"], is {entrypoint}")
    command = exec_form(values.get("CMD", ["[]"])[-1])
    port = check_serve_arguments("Dockerfile CMD", command, flags)
    if port != exposed:
        problem(f"Dockerfile: CMD serves port {port} but EXPOSE says {exposed}")
    if "--data-dir" not in command or command[command.index("--data-dir") + 1] != "/data":
        problem("Dockerfile: CMD must serve --data-dir /data (the volume)")
    env = " ".join(values.get("ENV", []))
    url = re.search(r"KINDLING_URL=http://127\.0\.0\.1:(\d+)", env)
    if not url or int(url.group(1)) != exposed:
        problem(f"Dockerfile: ENV KINDLING_URL must name http://127.0.0.1:{exposed}")
    health = values.get("HEALTHCHECK", [])
    if len(health) != 1 or " CMD " not in f" {health[0]} ":
        problem("Dockerfile: expected one HEALTHCHECK … CMD …")
    else:
        probe = exec_form(f" {health[0]}".split(" CMD ", 1)[1])
        if probe[:1] != ["kindling"] or len(probe) < 2:
            problem(f"Dockerfile: the HEALTHCHECK should run a kindling subcommand: {probe}")
        elif f"USAGE: kindling {probe[1]}" not in subprocess.run([binary, probe[1], "--help"], capture_output=True, text=True).stdout:
            problem(f"Dockerfile: HEALTHCHECK runs `kindling {probe[1]}`, which does not exist")
    # Files the runtime stage takes from the repository are checked above; --from copies must
    # name a stage that exists.
    stage_names = {rest.split()[-1] for name, rest in instructions if name == "FROM" and " AS " in f" {rest.upper()} "}
    for name, rest in instructions:
        match = re.search(r"--from=(\S+)", rest) if name == "COPY" else None
        if match and match.group(1).lower() not in {s.lower() for s in stage_names}:
            problem(f"Dockerfile: COPY --from={match.group(1)}: no such stage")

    check_cluster_compose(flags, exposed)

    # compose.yaml
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    services = compose.get("services", {})
    kindling = services.get("kindling")
    prometheus = services.get("prometheus")
    if not kindling or not prometheus:
        problem("compose.yaml: expected services kindling and prometheus")
        return
    build = kindling.get("build", {})
    context = (DOCKER / build.get("context", ".")).resolve()
    if not (context / build.get("dockerfile", "Dockerfile")).is_file():
        problem(f"compose.yaml: the build's Dockerfile {build.get('dockerfile')} is not in {context}")
    if not (context / ".dockerignore").is_file():
        problem(f"compose.yaml: no .dockerignore at the build context {context}")
    compose_port = check_serve_arguments("compose.yaml kindling command", kindling.get("command", []), flags)
    published = [str(p).rsplit(":", 1)[-1].split("/")[0] for p in kindling.get("ports", [])]
    if [int(p) for p in published] != [exposed] or compose_port != exposed:
        problem(f"compose.yaml: kindling serves {compose_port} and publishes {published}; the image EXPOSEs {exposed}")
    secrets = compose.get("secrets", {})
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = str(volume).split(":", 1)[0]
            if source.startswith((".", "/")) and not (DOCKER / source).exists():
                problem(f"compose.yaml: {name} mounts {source}, which does not exist")
        for secret in service.get("secrets", []):
            secret_name = secret if isinstance(secret, str) else secret.get("source")
            if secret_name not in secrets:
                problem(f"compose.yaml: {name} uses the secret {secret_name}, which is not defined")
    for name, secret in secrets.items():
        if "file" in secret and not (DOCKER / secret["file"]).exists():
            problem(f"compose.yaml: the secret {name} reads {secret['file']}, which does not exist")
    environment = kindling.get("environment", {})
    for name, secret in secrets.items():
        if "environment" in secret and secret["environment"] not in environment:
            problem(f"compose.yaml: the secret {name} comes from {secret['environment']}, which kindling is not given")

    # prometheus.yml: scrapes kindling's /.metrics on the exposed port with the admin secret.
    config = yaml.safe_load((DOCKER / "prometheus.yml").read_text())
    jobs = [job for job in config.get("scrape_configs", []) if job.get("metrics_path") == "/.metrics"]
    if len(jobs) != 1:
        problem("prometheus.yml: expected one scrape job with metrics_path /.metrics")
        return
    targets = [t for group in jobs[0].get("static_configs", []) for t in group.get("targets", [])]
    if targets != [f"kindling:{exposed}"]:
        problem(f"prometheus.yml: targets {targets}, expected kindling:{exposed}")
    token = jobs[0].get("authorization", {}).get("credentials_file", "")
    mounted = {f"/run/secrets/{s if isinstance(s, str) else s.get('target', s.get('source'))}" for s in prometheus.get("secrets", [])}
    if token not in mounted:
        problem(f"prometheus.yml: the bearer token file {token!r} is not a secret compose gives prometheus")


main()
if problems:
    print("check-docker-files: " + str(len(problems)) + " problem(s):", file=sys.stderr)
    for text in problems:
        print("  " + text, file=sys.stderr)
    sys.exit(1)
print("check-docker-files: Dockerfile, compose.yaml, compose.cluster.yaml and prometheus.yml name only what exists")
