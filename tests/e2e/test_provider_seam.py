"""The app takes a provider instance: the gateway serves through any `ChatProvider`,
here the shipped in-process fake, and asks it (not litellm) for its warm-up, context
windows, prices and reserved request parameters."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.components import ComponentsFactory
from gateway.settings import parse_config
from gateway.testing.fake_provider import FakeProvider
from gateway.testing.threaded_server import ThreadedServer
from tests.conftest import RunningGateway, gateway_config_dict
from tests.e2e.helpers import client_for, unique_prompt


def test_a_given_provider_serves_every_call_and_stays_its_callers(
    tmp_path: Path, components_factory: ComponentsFactory
) -> None:
    fake = FakeProvider(
        answer="answered by the in-process fake",
        models={"fake-model", "fake-embedder"},
        reserved={"secret_knob"},
    )
    # Port 9 refuses connections: nothing may reach an upstream over HTTP.
    config, _ = parse_config(gateway_config_dict("http://127.0.0.1:9", tmp_path / "data"))
    app = create_app(config, provider=fake, components_factory=components_factory)
    server = ThreadedServer(app).start()
    try:
        client = client_for(RunningGateway(url=server.url, config=config, server=server))
        messages = [{"role": "user", "content": unique_prompt()}]
        first = client.chat.completions.with_raw_response.create(
            model="fake-model", messages=messages
        )
        assert first.headers["x-gateway-cache"] == "miss"
        assert first.parse().choices[0].message.content == "answered by the in-process fake"
        again = client.chat.completions.with_raw_response.create(
            model="fake-model", messages=messages
        )
        assert again.headers["x-gateway-cache"] == "exact"
        asked = [body for body in fake.chat_bodies if body.get("messages") == messages]
        assert len(asked) == 1

        # The provider's reserved parameters are refused before it is called.
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model="fake-model", messages=messages, extra_body={"secret_knob": 1}
            )
        assert isinstance(refused.value.body, dict)
        assert refused.value.body["param"] == "secret_knob"
        # A model the provider does not know is a 404, as with litellm's.
        with pytest.raises(openai.NotFoundError):
            client.chat.completions.create(model="no-such-model", messages=messages)
        assert len(fake.chat_bodies) == 1
        assert fake.warmed_up
    finally:
        server.stop()
    assert not fake.closed  # the app closes only a provider it made itself
