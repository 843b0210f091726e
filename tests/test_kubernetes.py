"""The Kubernetes manifests (deploy/kubernetes), checked offline: each overlay renders (its kustomization's
resources, directories followed, its namespace set) into objects valid against Kubernetes' schemas
(kubernetes-validate), passes checkov's security baseline, and agrees with the code: every setting it
sets is one core/settings reads, secrets come only from the Secret, the probes hit routes the API
serves (or the workers' own probe), the API drains longer than the longest streamed answer, and the
README's Kubernetes section names every value an operator sets."""

import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from backend.main import create_app
from core.runtime.child_env import settings_env_names
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.settings.models import LlmSettings
from tests.conftest import REPO_ROOT

DEPLOY = REPO_ROOT / "deploy" / "kubernetes"
OVERLAYS = ("hosted", "cpu-models")
KUBERNETES_VERSION = "1.30.0"
SECRET = "studyai-secrets"
SECRET_KEYS = ("DATABASE_URL", "REDIS_URL", "LLM_API_KEY", "SMTP_PASSWORD", "OIDC_CLIENT_SECRET")
UVICORN_OWN = {"FORWARDED_ALLOW_IPS"}  # read by uvicorn itself, not core/settings


def render(directory: Path, namespace: str | None = None) -> list[dict[str, Any]]:
    """The objects `kubectl apply -k directory` applies: the kustomization's resources (a directory is
    another kustomization), each given the outermost namespace. Plain resources only: a generator or a
    patch would need kustomize itself to render, so the manifests use none (checked here)."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    assert set(kustomization) <= {"apiVersion", "kind", "namespace", "resources"}, kustomization
    namespace = namespace or kustomization.get("namespace")
    objects: list[dict[str, Any]] = []
    for resource in kustomization["resources"]:
        path = (directory / resource).resolve()
        if path.is_dir():
            objects += render(path, namespace)
        else:
            objects += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    for obj in objects:
        if namespace:
            obj["metadata"]["namespace"] = namespace
    return objects


@pytest.fixture(scope="module", params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(DEPLOY / request.param)


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {obj["metadata"]["name"]: obj for obj in objects if obj["kind"] == kind}


def pod_specs(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    workloads = [o for o in objects if o["kind"] in ("Deployment", "StatefulSet", "Job")]
    return {o["metadata"]["name"]: o["spec"]["template"]["spec"] for o in workloads}


def test_every_object_is_valid_for_kubernetes(overlay: list[dict[str, Any]]) -> None:
    for obj in overlay:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        assert obj["metadata"]["namespace"] == "studyai"
    names = Counter((obj["kind"], obj["metadata"]["name"]) for obj in overlay)
    assert [key for key, count in names.items() if count > 1] == []


def test_the_api_scales_on_cpu_and_every_component_has_a_disruption_budget(
    overlay: list[dict[str, Any]],
) -> None:
    deployments = of_kind(overlay, "Deployment")
    assert {"studyai-api", "studyai-worker-index", "studyai-worker-agents"} <= set(deployments)
    [hpa] = of_kind(overlay, "HorizontalPodAutoscaler").values()
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "studyai-api"}
    assert hpa["spec"]["scaleTargetRef"] == target
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    budgets = of_kind(overlay, "PodDisruptionBudget").values()
    covered = {b["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] for b in budgets}
    workloads = [o for o in overlay if o["kind"] in ("Deployment", "StatefulSet")]
    assert {w["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] for w in workloads} <= covered


def test_migrations_run_in_a_job_before_the_new_pods(overlay: list[dict[str, Any]]) -> None:
    [job] = of_kind(overlay, "Job").values()
    [container] = job["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["studyai", "migrate"]
    assert job["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "PreSync"
    assert "pre-upgrade" in job["metadata"]["annotations"]["helm.sh/hook"]


def test_probes_reach_what_the_processes_serve(overlay: list[dict[str, Any]], tmp_path: Path) -> None:
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=tmp_path)  # type: ignore[call-arg]
    app = create_app(settings, ServiceUrls(database_url="postgresql://unused", redis_url="redis://unused"))
    routes = set(app.openapi()["paths"])
    for name, spec in pod_specs(overlay).items():
        for container in spec["containers"]:
            probes = [container.get(p) for p in ("startupProbe", "livenessProbe", "readinessProbe")]
            if name == "studyai-migrate":
                assert probes == [None, None, None]
                continue
            assert all(probes), f"{name} lacks a probe"
            for probe in probes:
                if "httpGet" in probe and name.startswith("studyai-api"):
                    assert probe["httpGet"]["path"] in routes, probe
                elif "exec" in probe:
                    assert probe["exec"]["command"] == ["python", "-m", "workers.probe"]
                    assert (REPO_ROOT / "workers" / "probe.py").exists()
                else:  # llama.cpp's server: its own /health
                    assert probe["httpGet"]["path"] == "/health" and name == "studyai-model"
    api = pod_specs(overlay)["studyai-api"]
    [container] = api["containers"]
    assert [p["httpGet"]["path"] for p in (container["livenessProbe"], container["readinessProbe"])] == [
        "/health",
        "/health/ready",
    ]


def test_the_api_drains_longer_than_the_longest_streamed_answer(overlay: list[dict[str, Any]]) -> None:
    """After preStop, uvicorn finishes every open request before exiting: the grace period must cover the
    longest answer (LLM_TIMEOUT_S of generation, after up to two minutes in the model's queue)."""
    api = pod_specs(overlay)["studyai-api"]
    [container] = api["containers"]
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    config = configmap(overlay)
    longest = float(config.get("LLM_TIMEOUT_S", LlmSettings().timeout_s)) + 120
    assert api["terminationGracePeriodSeconds"] >= int(pre_stop[1]) + longest


def configmap(objects: list[dict[str, Any]]) -> dict[str, str]:
    [config] = of_kind(objects, "ConfigMap").values()
    return dict(config["data"])


def test_every_value_set_is_a_setting_and_secrets_come_only_from_the_secret(
    overlay: list[dict[str, Any]],
) -> None:
    known = settings_env_names() | UVICORN_OWN
    config = configmap(overlay)
    assert not [key for key in config if key not in known], "ConfigMap keys core/settings does not read"
    assert not set(config) & set(SECRET_KEYS), "a secret in the ConfigMap"
    assert of_kind(overlay, "Secret") == {}  # the operator creates it (README); none is shipped
    for name, spec in pod_specs(overlay).items():
        for container in spec["containers"]:
            env = {e["name"] for e in container.get("env", [])}
            assert not [e for e in env if e not in known], (name, env)
            refs = container.get("envFrom", [])
            secrets = [r["secretRef"]["name"] for r in refs if "secretRef" in r]
            assert secrets in ([SECRET], []), (name, refs)
            assert all("value" not in e or e["name"] not in SECRET_KEYS for e in container.get("env", []))


def test_the_readme_names_every_value_an_operator_sets() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## Running on Kubernetes", 1)[1].split("\n## ", 1)[0]
    keys = {key for overlay in OVERLAYS for key in configmap(render(DEPLOY / overlay))}
    assert not [key for key in sorted(keys | set(SECRET_KEYS)) if f"`{key}`" not in section]
    for overlay in OVERLAYS:
        assert f"deploy/kubernetes/{overlay}" in section


def test_the_manifests_pass_checkovs_security_baseline() -> None:
    """checkov's Kubernetes checks (its own venv: `make k8s-tools`), offline; a skipped check carries its
    reason in the manifest."""
    checkov = REPO_ROOT / ".venv-checkov" / "bin" / "checkov"
    assert checkov.exists(), "run `make k8s-tools` (part of `make install`)"
    done = subprocess.run(
        [str(checkov), "-d", str(DEPLOY), "--framework", "kubernetes", "--compact", "--quiet",
         "--skip-download"],
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"Passed checks: (\d+), Failed checks: (\d+)", done.stdout)
    assert passed is not None and int(passed.group(1)) > 100 and passed.group(2) == "0", done.stdout[-2000:]
