"""The uploaded pictures' storage as make run serves it (feeds.images; docs/serving.md): nginx
serves the local storage's files itself, typed and cached for a year, and takes a picture's body."""

from feeds.rules import IMAGE_UPLOAD_MAX
from ugcsite.serving import nginx_conf


def test_nginx_serves_the_local_storage_with_a_long_cache_and_takes_a_pictures_body(settings, tmp_path):
    settings.MEDIA_ROOT = media_here = tmp_path / "media"
    conf = nginx_conf(run_dir="/tmp/run", port=8000)
    location = next(line for line in conf.splitlines() if "location /media/images/" in line)
    assert f"alias {media_here}/images/;" in location
    assert "image/png png; image/jpeg jpg; image/webp webp;" in location
    assert "max-age=31536000, immutable" in location and "nosniff" in location
    assert f"client_max_body_size {IMAGE_UPLOAD_MAX};" in conf
    settings.MEDIA_STORAGE_BACKEND = "storages.backends.s3.S3Storage"  # a bucket serves its own addresses
    assert "/media/" not in nginx_conf(run_dir="/tmp/run", port=8000)
