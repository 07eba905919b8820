"""compose.yaml against the Compose Specification's JSON schema, and the kustomize
overlays rendered by ``kubectl kustomize`` and checked with kubernetes-validate, plus
what no schema says: grace periods, non-root pods, probes, selectors that match."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from homing.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
# The Compose Specification's schema (Apache-2.0), as shipped in docker-compose 1.29.2's
# wheel (compose/config/compose_spec.json) on PyPI; see tests/data/README.md.
COMPOSE_SCHEMA = ROOT / "tests" / "data" / "compose-spec.json"
K8S_VERSION = "1.32.0"


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return loaded


def test_compose_yaml_is_valid_against_the_compose_specification_schema() -> None:
    schema = json.loads(COMPOSE_SCHEMA.read_text())
    validator = jsonschema.Draft201909Validator(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(_compose())]
    assert errors == []


def test_the_compose_schema_check_catches_a_wrong_file() -> None:
    schema = json.loads(COMPOSE_SCHEMA.read_text())
    broken = _compose()
    broken["services"]["api"]["restart_policy"] = "always"  # not a service key
    broken["services"]["worker"]["read_only"] = "yes"  # not a boolean
    assert len(list(jsonschema.Draft201909Validator(schema).iter_errors(broken))) == 2


def test_compose_profiles_embedded_and_scaled() -> None:
    services = _compose()["services"]
    profiles = {name: tuple(s.get("profiles", ())) for name, s in services.items()}
    assert [n for n, p in profiles.items() if "embedded" in p] == ["homing"]
    scaled = {n for n, p in profiles.items() if "scaled" in p}
    assert scaled == {"postgres", "redis", "migrate", "api", "worker"}
    assert profiles["sandbox"] == ("sandbox",)
    assert services["api"]["deploy"]["replicas"] == services["worker"]["deploy"]["replicas"] == 2
    for name in ("api", "worker"):
        assert services[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
    deadline = Settings().provider_calls.deadline_seconds
    for name in ("homing", "migrate", "api", "worker", "sandbox"):
        service = services[name]
        assert service["read_only"] is True and service["user"] == "10001:10001"
        assert float(service["stop_grace_period"].rstrip("s")) > deadline


def _render(overlay: str) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl (with its kustomize) is needed to render deploy/kubernetes"
    rendered = subprocess.run(
        [kubectl, "kustomize", str(ROOT / "deploy" / "kubernetes" / "overlays" / overlay)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [doc for doc in yaml.safe_load_all(rendered) if doc]


def _pods(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (d["metadata"]["name"], d["spec"]["template"])
        for d in docs
        if d["kind"] in {"Deployment", "Job"}
    ]


@pytest.mark.parametrize("overlay", ["embedded", "scaled"])
def test_the_kustomize_overlay_renders_and_validates(overlay: str) -> None:
    docs = _render(overlay)
    for doc in docs:
        if doc["kind"] == "ServiceMonitor":  # a CRD: kubernetes-validate has no schema
            assert doc["apiVersion"] == "monitoring.coreos.com/v1"
            continue
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    deadline = Settings().provider_calls.deadline_seconds
    for name, template in _pods(docs):
        spec = template["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"]["drop"] == ["ALL"], name
            assert container["image"] == "localhost/homing:dev", name
        if name != "homing-migrate":
            assert spec["terminationGracePeriodSeconds"] > deadline, name
            [container] = spec["containers"]
            assert container["readinessProbe"]["httpGet"]["path"] == "/readyz", name
            assert "livenessProbe" in container, name


def test_the_kubernetes_check_catches_a_wrong_manifest() -> None:
    docs = _render("scaled")
    [api] = [d for d in docs if (d["kind"], d["metadata"]["name"]) == ("Deployment", "homing-api")]
    api["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(api, K8S_VERSION, strict=True)


def test_the_scaled_overlay_has_every_part_the_issue_lists() -> None:
    docs = _render("scaled")
    kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in docs)
    assert kinds == [
        "Deployment/homing-api",
        "Deployment/homing-worker",
        "HorizontalPodAutoscaler/homing-api",
        "HorizontalPodAutoscaler/homing-worker",
        "Job/homing-migrate",
        "NetworkPolicy/homing",
        "PodDisruptionBudget/homing-api",
        "PodDisruptionBudget/homing-worker",
        "Secret/homing",
        "Service/homing-api",
        "Service/homing-worker-metrics",
        "ServiceMonitor/homing",
    ]
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    labels = {name: template["metadata"]["labels"] for name, template in _pods(docs)}
    # Every selector selects the pods it is meant for.
    assert (
        by_name["Service", "homing-api"]["spec"]["selector"].items() <= labels["homing-api"].items()
    )
    for name in ("homing-api", "homing-worker"):
        selector = by_name["PodDisruptionBudget", name]["spec"]["selector"]["matchLabels"]
        assert selector.items() <= labels[name].items()
        target = by_name["HorizontalPodAutoscaler", name]["spec"]["scaleTargetRef"]
        assert (target["kind"], target["name"]) == ("Deployment", name)
        env_from = by_name["Deployment", name]["spec"]["template"]["spec"]["containers"][0]
        assert env_from["envFrom"] == [{"secretRef": {"name": "homing"}}]
    assert "HOMING_SECRET_KEY" in by_name["Secret", "homing"]["stringData"]
    monitor = by_name["ServiceMonitor", "homing"]["spec"]
    watched = monitor["selector"]["matchLabels"].items()
    services = [d for d in docs if d["kind"] == "Service"]
    assert all(watched <= d["metadata"].get("labels", {}).items() for d in services)
    ports = {p["name"] for d in services for p in d["spec"]["ports"]}
    assert {e["port"] for e in monitor["endpoints"]} == ports == {"http", "metrics"}
