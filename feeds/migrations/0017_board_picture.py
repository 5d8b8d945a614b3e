import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('feeds', '0016_staff_action'),
    ]

    operations = [
        migrations.CreateModel(
            name='BoardPicture',
            fields=[
                ('board', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='feeds.board')),
                ('version', models.CharField(max_length=16)),
                ('png', models.BinaryField()),
                ('width', models.PositiveIntegerField()),
                ('height', models.PositiveIntegerField()),
                ('blurhash', models.CharField(max_length=64)),
                ('rendered_at', models.DateTimeField(auto_now=True)),
            ],
        ),
    ]
